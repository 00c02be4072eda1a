package query

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func (p *plan) rng() v1.Range {
	return v1.Range{Start: p.iv.Start, End: p.iv.End, Step: p.iv.Step}
}

// series runs one range query and frames it.
func (p *plan) series(ctx context.Context, expr string, o frames.SeriesOptions) (data.Frames, prom.Matrix, error) {
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, nil, err
	}
	o.Legend, o.GroupLabels = p.q.Legend, p.b.GroupLabels(p.q.Grouping)
	o.Executed = frames.Executed(expr, p.iv.Step)
	o.Notices = append(append(o.Notices, p.notices...), warningNotices(warn)...)
	return frames.TimeSeries(m, o), m, nil
}

// queue runs each signal as its own plain expression, concurrently (see
// vllm.QueueSignals for why), and tags the series here.
func (p *plan) queue(ctx context.Context) (data.Frames, error) {
	sigs, ruleNotes := p.queueSignals(ctx)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	exprs := make([]string, len(sigs))
	for i, s := range sigs {
		exprs[i] = s.Expr
	}
	f := frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitRequests), Legend: p.q.Legend, Units: gatewayUnits,
		GroupLabels: p.b.GroupLabels(p.q.Grouping), Executed: frames.Executed(strings.Join(exprs, "\n"), p.iv.Step),
		Notices: append(append(append(append(append([]data.Notice{}, p.notices...), ruleNotes...), warningNotices(warn)...), p.gatewayNotices(m)...), roleNotes...)})
	addNotices(f, p.signalNotices(ctx, tagsOf(m), []need{
		{key: vllm.Running, tags: []string{"running"}, without: "the running series are left out"},
		{key: vllm.Waiting, tags: []string{"waiting"}, without: "the waiting series are left out"},
	}))
	return f, nil
}

// signals runs the expressions concurrently and merges their answers,
// each series tagged with its signal. Series are copies with their own
// labels; the columns are shared with the cache, read-only.
func (p *plan) signals(ctx context.Context, sigs []vllm.SignalExpr) (prom.Matrix, []string, error) {
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (prom.Matrix, []string, error) {
		return p.memo.rangeQuery(ctx, s.Expr, p.rng())
	})
	if err != nil {
		return nil, nil, err
	}
	var out prom.Matrix
	for i, m := range answers {
		for _, s := range m {
			out = append(out, tagged(s, sigs[i].Name))
		}
	}
	return out, warn, nil
}

// concurrently runs query for every expression at once and returns the
// answers in the order of sigs, with every warning, or the first error (in
// that order). A panic in one of them is that expression's error: it runs
// off the executor's goroutine, whose recovery cannot see it.
func concurrently[T any](sigs []vllm.SignalExpr, query func(vllm.SignalExpr) (T, []string, error)) ([]T, []string, error) {
	type answer struct {
		v    T
		warn []string
		err  error
	}
	answers := make([]answer, len(sigs))
	var wg sync.WaitGroup
	for i, s := range sigs {
		wg.Go(func() {
			a := &answers[i]
			defer func() {
				if r := recover(); r != nil {
					a.err = newPanicError(r)
				}
			}()
			a.v, a.warn, a.err = query(s)
		})
	}
	wg.Wait()
	out := make([]T, len(sigs))
	var warn []string
	for i, a := range answers {
		if a.err != nil {
			return nil, nil, a.err
		}
		warn = append(warn, a.warn...)
		out[i] = a.v
	}
	return out, warn, nil
}

// tagged is a copy of s with SignalLabel set to name.
func tagged(s *prom.Series, name string) *prom.Series {
	c := *s
	c.Labels = make(map[string]string, len(s.Labels)+1)
	for k, v := range s.Labels {
		c.Labels[k] = v
	}
	c.Labels[vllm.SignalLabel] = name
	return &c
}

func (p *plan) waitTime(ctx context.Context) (data.Frames, error) {
	key := vllm.FamilySignals[p.q.Family]
	expr, ruleNotes := p.waitTimeExpr(ctx)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	notices := append(append(append(append(append([]data.Notice{}, p.notices...), ruleNotes...), warningNotices(warn)...), waitNotices(m, key, p.q.Live, p.lowestBound(ctx, key))...), roleNotes...)
	needs := []need{{key: key, tags: []string{"mean"}, without: "no quantile or mean can be computed"}}
	if p.q.Live {
		needs = append(needs, need{key: vllm.Waiting, tags: []string{"live"}, without: "the live wait (waiting ÷ queue-time rate) is left out"})
	}
	notices = append(notices, p.signalNotices(ctx, tagsOf(m), needs, key)...)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitSeconds), Legend: p.q.Legend,
		GroupLabels: p.b.GroupLabels(p.q.Grouping), Executed: frames.Executed(expr, p.iv.Step), Notices: notices}), nil
}

// waitNotices says what a latency histogram cannot show.
func waitNotices(m prom.Matrix, key vllm.SignalKey, live bool, lowest float64) []data.Notice {
	var out []data.Notice
	out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.LatencyText(key, live)})
	if live {
		out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.LiveWaitText()})
	}
	if below := belowBucket(m, lowest); below != "" {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("Some %s values are below %gs, the smallest histogram bucket: they are interpolated inside the first bucket, not measured.", below, lowest)})
	}
	return out
}

// belowBucket returns the first quantile signal with a value under lowest.
func belowBucket(m prom.Matrix, lowest float64) string {
	for _, s := range m {
		sig := s.Labels[vllm.SignalLabel]
		if sig == "" || sig[0] != 'p' {
			continue
		}
		for _, f := range s.Values {
			if !math.IsNaN(f) && f > 0 && f < lowest {
				return sig
			}
		}
	}
	return ""
}

func (p *plan) preemptions(ctx context.Context) (data.Frames, error) {
	preempt := need{key: vllm.Preemptions, tags: []string{"preemptions", "preemption_rate"}, without: "no preemption can be shown"}
	if p.q.AsSeries {
		f, m, err := p.series(ctx, p.b.PreemptionRate(p.q.Grouping, p.q.Filters, p.window), frames.SeriesOptions{Unit: "ops"})
		if err != nil {
			return nil, err
		}
		addNotices(f, p.signalNotices(ctx, tagsOf(m), []need{preempt}))
		return f, nil
	}
	expr := p.b.Preemptions(p.q.Filters)
	m, _, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	events := vllm.PreemptionEventsBy(m, p.b.InstanceOf, p.iv.Step)
	f := frames.Annotations(events, strings.Join(p.b.IdentityLabels(), vllm.IdentitySeparator), frames.Executed(expr, p.iv.Step))
	f.Meta.Notices = append(p.notices, p.signalNotices(ctx, tagsOf(m), []need{preempt}, vllm.KVUsage)...)
	return data.Frames{f}, nil
}
