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

// satGroup is one instance's (or engine's) evidence, step by step.
type satGroup struct {
	labels map[string]string
	steps  []vllm.SatStep
}

// saturation answers the verdict per instance: seven plain range
// expressions, the prefix-cache hit rate now and a window before (evidence
// only), and the stall expression run concurrently, aligned on the
// steps here, classified by vllm.Classify with the data source's thresholds.
func (p *plan) saturation(ctx context.Context) (data.Frames, error) {
	sigs := append(p.b.SaturationSignals(p.q.Grouping, p.q.Filters, p.iv.RateInterval),
		p.b.SaturationStallSignal(p.q.Grouping, p.q.Filters, p.stallWindow()))
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	times := p.stepTimes()
	groups := p.satGroups(m, times)
	exprs := make([]string, len(sigs))
	for i, s := range sigs {
		exprs[i] = s.Expr
	}
	executed := frames.Executed(strings.Join(exprs, "\n"), p.iv.Step)
	notices := append(append(append([]data.Notice{}, p.notices...), warningNotices(warn)...), roleNotes...)
	notices = append(notices, p.signalNotices(ctx, tagsOf(m), []need{
		{key: vllm.Running, tags: []string{vllm.SatRunning}, without: "no verdict can be given"},
		{key: vllm.KVUsage, tags: []string{vllm.SatKVUsage}, without: "KV-bound cannot be told apart"},
		{key: vllm.Preemptions, tags: []string{vllm.SatPreemptions}, without: "KV-bound cannot be told apart"},
	}, vllm.KVUsage)...)
	th := p.e.Settings.Saturation
	if th == (models.SaturationSettings{}) {
		th = models.DefaultSaturation() // settings built in code, not loaded
	}
	var rows []frames.SaturationRow
	var series prom.Matrix
	var timelines data.Frames
	var roles []string
	for _, g := range groups {
		roles = append(roles, p.b.RoleOf(g.labels))
		v := vllm.Classify(g.steps, th)
		rows = append(rows, frames.SaturationRow{Instance: p.b.InstanceOf(g.labels), Engine: g.labels["engine"],
			Verdict: v.Verdict, Reason: v.Reason, Ceiling: v.Ceiling, MeanRunning: v.MeanRunning, MeanWaiting: v.MeanWaiting,
			PeakKV: v.PeakKV, MeanPreemptions: v.MeanPreemptions, MeanArrivals: v.MeanArrivals, MeanCompletions: v.MeanCompletions})
		series = append(series, g.series(times, v)...)
		timelines = append(timelines, frames.VerdictTimeline(g.labels, strings.TrimSpace(p.groupName(g.labels)+" verdict"), times, v.Steps))
	}
	table := frames.SaturationTable(rows, p.q.Grouping == models.GroupInstanceEngine, executed, notices)
	if p.q.Grouping == models.GroupRole {
		frames.SaturationByRole(table, roles)
	}
	if p.q.Format == "table" {
		return data.Frames{table}, nil
	}
	out := frames.TimeSeries(series, frames.SeriesOptions{Legend: p.q.Legend, GroupLabels: p.b.GroupLabels(p.q.Grouping),
		Units: map[string]string{"utilisation": "percentunit", "arrivals": "reqps", "completions": "reqps"}, Executed: executed, Notices: notices})
	out = append(out, timelines...)
	if p.q.Format == "series" {
		return out, nil
	}
	table.Meta.Notices, table.Meta.ExecutedQueryString = nil, ""
	return append(out, table), nil
}

// stepTimes are the range's evaluation times, as Prometheus steps them.
func (p *plan) stepTimes() []time.Time {
	var out []time.Time
	for t := p.iv.Start; !t.After(p.iv.End); t = t.Add(p.iv.Step) {
		out = append(out, t)
	}
	return out
}

func (p *plan) groupName(l map[string]string) string {
	parts := []string{}
	for _, k := range p.b.GroupLabels(p.q.Grouping) {
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
	gl := p.b.GroupLabels(p.q.Grouping)
	byKey := map[string]*satGroup{}
	for _, s := range m {
		key, labels := groupKey(s.Labels, gl)
		g := byKey[key]
		if g == nil {
			g = &satGroup{labels: labels, steps: nanSteps(len(times))}
			byKey[key] = g
		}
		for j, t := range s.Times {
			if i, ok := index[t.UnixMilli()]; ok {
				setStep(&g.steps[i], s.Labels[vllm.SignalLabel], s.Values[j])
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
		for i := range g.steps {
			s := &g.steps[i]
			s.Arrivals = s.Completions + s.Arrivals // Arrivals held the change of waiting + running
		}
		out = append(out, g)
	}
	return out
}

func groupKey(l map[string]string, gl []string) (string, map[string]string) {
	labels := make(map[string]string, len(gl))
	parts := make([]string, len(gl))
	for i, k := range gl {
		labels[k], parts[i] = l[k], l[k]
	}
	return strings.Join(parts, "\x00"), labels
}

func nanSteps(n int) []vllm.SatStep {
	nan := math.NaN()
	out := make([]vllm.SatStep, n)
	for i := range out {
		out[i] = vllm.SatStep{Waiting: nan, Running: nan, RunningPeak: nan, KVUsage: nan, Preemptions: nan, Completions: nan, Arrivals: nan,
			PrefixHitRate: nan, PrefixHitRateBefore: nan}
	}
	return out
}

func setStep(s *vllm.SatStep, signal string, v float64) {
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
		s.Arrivals = v
	case vllm.SatStalled:
		s.Stalled = !math.IsNaN(v)
	case vllm.SatPrefixHitRate:
		s.PrefixHitRate = v
	case vllm.SatPrefixHitRateBefore:
		s.PrefixHitRateBefore = v
	}
}

// series are the group's utilisation, arrivals and completions.
func (g *satGroup) series(times []time.Time, v vllm.SatVerdict) prom.Matrix {
	mk := func(signal string, get func(i int) float64) *prom.Series {
		l := make(map[string]string, len(g.labels)+1)
		for k, x := range g.labels {
			l[k] = x
		}
		l[vllm.SignalLabel] = signal
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
