package models

// LoRAFormats are what a lora query returns: "table" (default), one row per
// instance with its adapters now, or "series", the running and waiting
// adapter counts per instance over time.
var LoRAFormats = []string{"table", "series"}

// parseLoRA reads the lora query's options. vLLM's LoRA gauge is one per
// API server (no model_name, no engine), so the only grouping is by
// instance; anything else is refused rather than silently ignored.
func (q *Query) parseLoRA(raw rawQuery) error {
	if raw.Grouping != "" && raw.Grouping != string(GroupInstance) {
		return invalid("grouping %q is not allowed for lora: vLLM reports LoRA adapters once per server; allowed: instance", raw.Grouping)
	}
	q.Grouping = GroupInstance
	q.Format = raw.Format
	if q.Format == "" {
		q.Format = LoRAFormats[0]
	}
	return oneOf("format", q.Format, LoRAFormats)
}
