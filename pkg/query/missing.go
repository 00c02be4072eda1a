package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

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
	engines, err := p.enginesInRange(ctx)
	if err != nil {
		return out // the answer itself succeeded; an unanswered probe adds nothing
	}
	if engines == 0 {
		return append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: vllm.NoEngineText(p.selection())})
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
	samples, increase := p.builder.ActivityProbes(n.key, p.query.Filters, p.lookback())
	var a vllm.Activity
	for _, q := range []struct {
		expr string
		into *float64
	}{{samples, &a.Samples}, {increase, &a.Increase}} {
		vec, _, err := p.memo.instantQuery(ctx, q.expr, p.timeRange.End, p.timeRange.Step)
		if err != nil {
			return ""
		}
		if len(vec) > 0 {
			*q.into = float64(vec[0].Value)
		}
	}
	return vllm.AbsenceText(n.key, p.builder.Prefix, n.without, p.window, a)
}

// lookback is the query's range plus one rate window and one step: every
// sample any step of the answer could have read.
func (p *plan) lookback() string {
	lookback := p.timeRange.End.Sub(p.timeRange.Start) + p.timeRange.RateInterval
	return promDuration(lookback.Round(p.timeRange.Step) + p.timeRange.Step)
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

// addNotices appends notices to frame 0.
func addNotices(f data.Frames, n []data.Notice) {
	if len(n) == 0 || len(f) == 0 {
		return
	}
	if f[0].Meta == nil {
		f[0].Meta = &data.FrameMeta{}
	}
	f[0].Meta.Notices = append(f[0].Meta.Notices, n...)
}
