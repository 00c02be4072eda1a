package vllm

// optional reports whether a signal that only some versions expose should
// be part of a query: yes when detection saw it or detection saw nothing.
func (b Builder) optional(key SignalKey) bool {
	return !b.Detected.Found() || b.Detected.HasSignal(key)
}

// SignalExpr is one plain expression and the SignalTagLabel value its series get.
type SignalExpr struct {
	Name, Expr string
}

// EngineLabels are the labels that identify one engine.
func (b Builder) EngineLabels() []string {
	return append(append([]string(nil), b.IdentityLabels()...), "engine", "model_name")
}
