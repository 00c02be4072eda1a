package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// need is a signal a query type needs, recognised in its answer by the
// SignalTagLabel values its parts carry.
type need struct {
	key  vllm.SignalKey
	tags []string
	// without says what the answer lacks when the signal is missing.
	without string
}

// tagsOf lists the SignalTagLabel values present in an answer.
func tagsOf(m prom.Matrix) map[string]bool {
	out := map[string]bool{}
	for _, s := range m {
		out[s.Labels[vllm.SignalTagLabel]] = true
	}
	return out
}

// signalNotices explains an answer that lacks what the query needs: either
// no engine matches the selection, or the engines do not export a signal
// (named with the vLLM versions that do), or they export it and it gave
// nothing to show (see absence). It also says when a renamed
// signal was read from its older name.
func (p *plan) signalNotices(ctx context.Context, present map[string]bool, needs []need, fallbacks ...vllm.SignalKey) []data.Notice {
	var out []data.Notice
	for _, k := range fallbacks {
		if txt, ok := p.builder.Detected.Fallback(k, p.builder.Prefix); ok {
			out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: txt})
		}
	}
	var missing []need
	for _, n := range needs {
		if !anyTag(present, n.tags) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return out
	}
	if none, done := p.noEngines(ctx); done {
		return append(out, none...)
	}
	for _, n := range missing {
		if txt := p.absence(ctx, n); txt != "" {
			out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: txt})
		}
	}
	return out
}

// absence explains a needed signal the answer lacks: the engines export
// no such series (over the range plus the lookback), or they do and
// nothing was recorded, or there is too little history for the rate
// window. An unanswered probe says nothing rather than guess.
func (p *plan) absence(ctx context.Context, n need) string {
	a, ok := p.activity(ctx, n.key)
	if !ok {
		return ""
	}
	return vllm.AbsenceText(n.key, p.builder.Prefix, n.without, p.window, a)
}

// lookback is the query's range plus one rate window and one step: every
// sample any step of the answer could have read.
func (p *plan) lookback() string {
	lookback := p.timeRange.End.Sub(p.timeRange.Start) + p.timeRange.RateInterval
	return interval.PromDuration(lookback.Round(p.timeRange.Step) + p.timeRange.Step)
}

func anyTag(present map[string]bool, tags []string) bool {
	for _, t := range tags {
		if present[t] {
			return true
		}
	}
	return false
}

// enginesInRange counts the selected engines that reported at any time in
// the query's range (both generations expose the running gauge by one name).
func (p *plan) enginesInRange(ctx context.Context) (int, error) {
	expr := p.builder.EnginesInRange(p.query.Filters, p.lookback())
	vec, _, err := p.memo.instantQuery(ctx, expr, p.timeRange.End, p.timeRange.Step)
	if err != nil || len(vec) == 0 {
		return 0, err
	}
	return int(vec[0].Value), nil
}

// noEngines probes whether the selection matched any engine over the
// range: done when it matched none (a warning saying so) or the probe went
// unanswered (nothing: the answer itself succeeded, and an unanswered probe
// adds nothing rather than guess). Not done: engines reported, and the
// caller explains what they lack.
func (p *plan) noEngines(ctx context.Context) (notices []data.Notice, done bool) {
	engines, err := p.enginesInRange(ctx)
	if err != nil {
		return nil, true
	}
	if engines == 0 {
		return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: vllm.NoEngineText(p.selection())}}, true
	}
	return nil, false
}

// selection describes the query's filters for a notice.
func (p *plan) selection() string {
	var parts []string
	for _, f := range []struct {
		name string
		vals []string
	}{{"models", p.query.Models}, {"instances", p.query.Instances}, {"engines", p.query.Engines}} {
		if len(f.vals) > 0 {
			parts = append(parts, f.name+" "+strings.Join(f.vals, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// rankSignals maps topk's rankBy to the signal it ranks by.
var rankSignals = map[string]vllm.SignalKey{
	"waiting": vllm.Waiting, "running": vllm.Running, "kv_usage": vllm.KVUsage,
	"wait_p99": vllm.QueueTime, "preemption_rate": vllm.Preemptions,
}

// activity runs key's activity probes (vllm.Builder.ActivityProbes) over
// the query's lookback; false when Prometheus did not answer them.
func (p *plan) activity(ctx context.Context, key vllm.SignalKey) (vllm.Activity, bool) {
	samples, increase := p.builder.ActivityProbes(key, p.query.Filters, p.lookback())
	var a vllm.Activity
	for _, q := range []struct {
		expr string
		into *float64
	}{{samples, &a.Samples}, {increase, &a.Increase}} {
		vec, _, err := p.memo.instantQuery(ctx, q.expr, p.timeRange.End, p.timeRange.Step)
		if err != nil {
			return a, false
		}
		if len(vec) > 0 {
			*q.into = float64(vec[0].Value)
		}
	}
	return a, true
}

// familyNotices explains each optional family the answer lacks, in the
// families' order: the fleet does not export it (with the version and
// setting that do), the selection matches no engine, or the engines export
// it and looked nothing up in the range.
func (p *plan) familyNotices(ctx context.Context, m prom.Matrix, fams []vllm.PrefixFamily) []data.Notice {
	var out []data.Notice
	det, prefix := p.builder.Detected, p.builder.Prefix
	present := tagsOf(m)
	var idle []vllm.PrefixFamily
	for _, fam := range fams {
		switch {
		case det.Found() && !fam.Present(det):
			out = append(out, infoNotice(vllm.PrefixMissingText(fam, prefix)))
		case !answered(present, fam.Signal):
			idle = append(idle, fam)
		}
	}
	if len(idle) == 0 {
		return out
	}
	if none, done := p.noEngines(ctx); done {
		return append(out, none...)
	}
	for _, fam := range idle {
		out = append(out, infoNotice(vllm.PrefixIdleText(fam, prefix, p.window)))
	}
	return out
}

// answered reports whether the answer holds the signal; a name ending in
// "*" matches every signal it begins.
func answered(present map[string]bool, signal string) bool {
	stem, wild := strings.CutSuffix(signal, "*")
	for s := range present {
		if s == signal || (wild && strings.HasPrefix(s, stem)) {
			return true
		}
	}
	return false
}

// infoNotice is a notice of severity info.
func infoNotice(text string) data.Notice {
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: text}
}
