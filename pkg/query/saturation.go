package query

import (
	"context"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The saturation type: its handler, each group's evidence step by step,
// the verdicts and its plan on the recording rules (saturationOnRules).

// satGroup is one instance's (or engine's) evidence, step by step.
type satGroup struct {
	labels map[string]string
	steps  []vllm.SatStep
	// queueChange is the change of waiting plus running per second at
	// each step (the vllm.SatQueued signal). It is kept apart from the
	// steps' Arrivals, which are completions plus it and can be summed
	// only once every signal is read (arrivals).
	queueChange []float64
}

// saturation answers the verdict per instance: seven plain range
// expressions (the preemption and completion rates on recording rules
// where they answer exactly: saturationOnRules, below), the prefix-cache hit
// rate now and a window before (evidence only), and the stall expression
// run concurrently, aligned on the steps here, classified by
// vllm.Classify with the data source's thresholds.
func (p *plan) saturation(ctx context.Context, o models.SaturationOptions) (data.Frames, error) {
	sigs := append(p.builder.SaturationSignals(p.query.Grouping, p.query.Filters, p.timeRange.RateInterval),
		p.builder.SaturationStallSignal(p.query.Grouping, p.query.Filters, p.settings.stallWindow))
	if t, ok := p.builder.SaturationThrottleSignal(p.query.Grouping, p.query.Filters, p.timeRange.RateInterval, p.settings.container); ok {
		sigs = append(sigs, t)
	}
	if r, ok := p.builder.SaturationRejected(p.query.Grouping, p.query.Filters, p.timeRange.RateInterval); ok {
		sigs = append(sigs, r)
	}
	mixes, ruleNotes := p.saturationOnRules(ctx, sigs)
	m, warn, err := p.mixedSignals(ctx, sigs, mixes)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	times := p.stepTimes()
	groups := p.satGroups(m, times)
	executed := p.executed(mixExprs(mixes)...)
	notices := p.noticesFor(ruleNotes, warningNotices(warn), roleNotes, p.signalNotices(ctx, tagsOf(m), []need{
		{key: vllm.Running, tags: []string{vllm.SatRunning}, without: "no verdict can be given"},
		{key: vllm.KVUsage, tags: []string{vllm.SatKVUsage}, without: "KV-bound cannot be told apart"},
		{key: vllm.Preemptions, tags: []string{vllm.SatPreemptions}, without: "KV-bound cannot be told apart"},
	}, vllm.KVUsage))
	rows, series, timelines := p.verdicts(groups, times)
	tableOpts := frames.SaturationOptions{WithEngine: p.query.Grouping == models.GroupInstanceEngine, ByRole: p.query.Grouping == models.GroupRole}
	if o.Format == "table" {
		tableOpts.Executed, tableOpts.Notices = executed, notices
		return data.Frames{frames.SaturationTable(rows, tableOpts)}, nil
	}
	out := p.saturationSeries(series, timelines, times, frames.SeriesOptions{Legend: p.query.Legend, GroupLabels: p.builder.GroupLabels(p.query.Grouping),
		Units: map[string]string{"utilisation": "percentunit", "arrivals": "reqps", "completions": "reqps"}, Executed: executed, Notices: notices})
	if o.Format == "series" {
		return out, nil
	}
	// Both: the series' first frame carries the executed query and the
	// notices, so the table after them carries neither.
	return append(out, frames.SaturationTable(rows, tableOpts)), nil
}

// verdicts classifies each group with the data source's thresholds: its
// table row, its utilisation, arrivals and completions series, and its
// verdict timeline.
func (p *plan) verdicts(groups []*satGroup, times []time.Time) ([]frames.SaturationRow, prom.Matrix, []frames.Timeline) {
	th := p.settings.saturation
	rows := make([]frames.SaturationRow, 0, len(groups))
	series := make(prom.Matrix, 0, 3*len(groups))
	timelines := make([]frames.Timeline, 0, len(groups))
	for _, g := range groups {
		v := vllm.Classify(g.steps, th)
		rows = append(rows, frames.SaturationRow{Instance: p.builder.InstanceOf(g.labels), Engine: g.labels["engine"], Role: p.builder.RoleOf(g.labels),
			Verdict: v.Verdict, Reason: v.Reason, Ceiling: v.Ceiling, MeanRunning: v.MeanRunning, MeanWaiting: v.MeanWaiting,
			PeakKV: v.PeakKV, MeanPreemptions: v.MeanPreemptions, MeanArrivals: v.MeanArrivals, MeanCompletions: v.MeanCompletions})
		series = append(series, g.series(times, v)...)
		timelines = append(timelines, frames.Timeline{Labels: g.labels, Name: strings.TrimSpace(p.groupName(g.labels) + " verdict"), Verdicts: v.Steps})
	}
	return rows, series, timelines
}

// stepTimes are the range's evaluation times, as Prometheus steps them.
func (p *plan) stepTimes() []time.Time {
	var out []time.Time
	for t := p.timeRange.Start; !t.After(p.timeRange.End); t = t.Add(p.timeRange.Step) {
		out = append(out, t)
	}
	return out
}

func (p *plan) groupName(l map[string]string) string {
	parts := []string{}
	for _, k := range p.builder.GroupLabels(p.query.Grouping) {
		if l[k] != "" {
			parts = append(parts, l[k])
		}
	}
	return strings.Join(parts, " ")
}

// satGroups aligns the tagged series on the steps, one group per
// instance (or engine), sorted by name.
func (p *plan) satGroups(m prom.Matrix, times []time.Time) []*satGroup {
	index := make(map[int64]int, len(times))
	for i, t := range times {
		index[t.UnixMilli()] = i
	}
	gl := p.builder.GroupLabels(p.query.Grouping)
	byKey := map[string]*satGroup{}
	for _, s := range m {
		key := groupKey(s.Labels, gl)
		g := byKey[key]
		if g == nil {
			g = &satGroup{labels: groupLabels(s.Labels, gl), steps: nanSteps(len(times)), queueChange: nans(len(times))}
			byKey[key] = g
		}
		for j, t := range s.Times {
			if i, ok := index[t.UnixMilli()]; ok {
				g.set(i, s.Labels[vllm.SignalTagLabel], s.Values[j])
			}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*satGroup, 0, len(keys))
	for _, k := range keys {
		g := byKey[k]
		g.arrivals()
		out = append(out, g)
	}
	return out
}

// groupKey names a series' group by its values of the group labels gl.
// It runs once per series (ten signals per group), so it allocates only
// where there is more than one label to join.
func groupKey(l map[string]string, gl []string) string {
	if len(gl) == 1 {
		return l[gl[0]]
	}
	parts := make([]string, len(gl))
	for i, k := range gl {
		parts[i] = l[k]
	}
	return strings.Join(parts, "\x00")
}

// groupLabels are a group's labels: its values of the group labels gl,
// taken once, from its first series.
func groupLabels(l map[string]string, gl []string) map[string]string {
	labels := make(map[string]string, len(gl))
	for _, k := range gl {
		labels[k] = l[k]
	}
	return labels
}

// nans is n NaNs: no value at any step.
func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// nanSteps is n steps without any value.
func nanSteps(n int) []vllm.SatStep {
	nan := math.NaN()
	out := make([]vllm.SatStep, n)
	for i := range out {
		out[i] = vllm.SatStep{Waiting: nan, Running: nan, RunningPeak: nan, KVUsage: nan, Preemptions: nan, Completions: nan, Arrivals: nan,
			PrefixHitRate: nan, PrefixHitRateBefore: nan, CPUThrottled: nan, Rejected: nan}
	}
	return out
}

// set records one signal's value at step i.
func (g *satGroup) set(i int, signal string, v float64) {
	s := &g.steps[i]
	switch signal {
	case vllm.SatWaiting:
		s.Waiting = v
	case vllm.SatRunning:
		s.Running = v
	case vllm.SatRunningPeak:
		s.RunningPeak = v
	case vllm.SatKVUsage:
		s.KVUsage = v
	case vllm.SatPreemptions:
		s.Preemptions = v
	case vllm.SatCompletions:
		s.Completions = v
	case vllm.SatQueued:
		g.queueChange[i] = v
	case vllm.SatStalled:
		s.Stalled = !math.IsNaN(v)
	case vllm.SatPrefixHitRate:
		s.PrefixHitRate = v
	case vllm.SatPrefixHitRateBefore:
		s.PrefixHitRateBefore = v
	case vllm.SatCPUThrottled:
		s.CPUThrottled = v
	case vllm.SatRejected:
		// One series per reason: the step's rate is their sum.
		if math.IsNaN(s.Rejected) {
			s.Rejected = 0
		}
		s.Rejected += v
	}
}

// arrivals sets each step's arrivals: every request that arrived is
// finished, running or waiting, so arrivals are completions plus the
// change of waiting and running (vllm.SaturationSignals).
func (g *satGroup) arrivals() {
	for i := range g.steps {
		g.steps[i].Arrivals = g.steps[i].Completions + g.queueChange[i]
	}
}

// series are the group's utilisation, arrivals and completions.
func (g *satGroup) series(times []time.Time, v vllm.SatVerdict) prom.Matrix {
	mk := func(signal string, get func(i int) float64) *prom.Series {
		l := make(map[string]string, len(g.labels)+1)
		for k, x := range g.labels {
			l[k] = x
		}
		l[vllm.SignalTagLabel] = signal
		s := &prom.Series{Labels: l, Times: times, Values: make([]float64, len(times))}
		for i := range times {
			s.Values[i] = get(i)
		}
		return s
	}
	return prom.Matrix{
		mk("utilisation", func(i int) float64 { return v.Utilisation[i] }),
		mk("arrivals", func(i int) float64 { return g.steps[i].Arrivals }),
		mk("completions", func(i int) float64 { return g.steps[i].Completions }),
	}
}

// saturationOnRules plans the saturation query's signals sigs: the
// preemption and completion rates on the recorded per-engine rates, and
// the stall signal's inputs on the stall group at a recorded stall window, when
// those answer the question (step, rate window, grouping and matchers, as
// RuleFit checks), from the rules' first evaluation on when the range
// starts before it (rulemix.go); the other signals, and every signal
// otherwise, stay raw (vllm.SaturationRawWhy says why each). The notice
// names the signals read from the rules.
func (p *plan) saturationOnRules(ctx context.Context, sigs []vllm.SignalExpr) ([]ruleMix, []data.Notice) {
	u, ok := p.onRules(ctx, p.window)
	var plans map[string]vllm.RulePlan
	if ok {
		plans = p.builder.SaturationFromRules(u.rs.Prefix, p.query.Grouping, p.query.Filters, u.fit.Window)
		if rp, ok := p.builder.SaturationStallFromRules(u.rs.Prefix, p.query.Grouping, p.query.Filters, p.settings.stallWindow); ok {
			if plans == nil {
				plans = map[string]vllm.RulePlan{}
			}
			plans[vllm.SatStalled] = rp
		}
	}
	cs := make([]ruleCandidate, len(sigs))
	for i, s := range sigs {
		cs[i].raw = s.Expr
		cs[i].rp, cs[i].ok = plans[s.Name]
	}
	ms, notes := p.mixed(ctx, u, cs) // all raw, without a notice, when no candidate is ok
	return ms, saturationNotes(notes, sigs, ms)
}

// saturationNotes adds to the rules notice the signals it covers: a
// saturation answer mixes recorded and raw signals at every step.
func saturationNotes(notes []data.Notice, sigs []vllm.SignalExpr, ms []ruleMix) []data.Notice {
	if len(notes) == 0 {
		return notes
	}
	var onRules []string
	for i, m := range ms {
		if m.rules != "" {
			onRules = append(onRules, sigs[i].Name)
		}
	}
	out := append([]data.Notice(nil), notes...)
	out[0].Text += vllm.SaturationRulesClause(onRules)
	return out
}
