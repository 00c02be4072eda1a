package query

// The capacity type's plan: every group's servers over the range (one
// signal set, run at once), the objective's measured p99, and from them
// the demand, what one replica sustains and the replicas needed.

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// capacityPlan is a capacity query's plan with its options.
type capacityPlan struct {
	*plan
	o    models.CapacityOptions
	gpus agentGPUs // the node agents' GPUs per server, where they map any
}

// capacity answers the capacity query: a table with a row per group and
// the demand over time as series (format both, the default), or either.
func (p *plan) capacity(ctx context.Context, o models.CapacityOptions) (data.Frames, error) {
	c := capacityPlan{plan: p, o: o}
	sigs := p.builder.CapacitySignals(p.query.Grouping, p.query.Filters, p.window, p.settings.rulesScrape)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	gl := p.builder.GroupLabels(p.query.Grouping)
	groups := vllm.CapacityGroups(m, gl, p.builder.InstanceOf)
	measuredExpr := p.builder.CapacityWait(o.Wait, p.query.Grouping, p.query.Filters, p.timeRange.End.Sub(p.timeRange.Start))
	measured := c.measured(ctx, measuredExpr, gl)
	notices := p.noticesFor(warningNotices(warn))
	var in twinInputs
	var inErr error
	if c.o.Format != "servers" { // the per-server table runs no what-if
		in, inErr = c.twinInputs(ctx, gl)
	}
	if inErr != nil {
		notices = append(notices, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: "No what-if: the request lengths or KV cache could not be read: " + inErr.Error()})
	}
	c.gpus = c.agentGPUs(ctx)
	a := capacityAnswer{rows: make([]frames.CapacityRow, len(groups))}
	for i, g := range groups {
		e := vllm.EstimateCapacity(g, p.timeRange.Step)
		a.rows[i] = c.row(g, e, gl, measured)
		notices = append(notices, c.groupNotices(g, e, gl)...)
		if c.o.Format == "servers" {
			a.servers = append(a.servers, c.serverRows(g, gl)...)
		} else if inErr == nil {
			notices = append(notices, c.addWhatIf(&a, i, g, e, in, gl)...)
		}
	}
	st := c.stack(ctx, gl)
	st.fileStack(a.rows, groups, gl)
	notices = append(notices, st.notices...)
	if len(groups) > 0 {
		notices = append(notices, c.gpuNotice(groups))
	}
	if len(groups) == 0 {
		if none, done := p.noEngines(ctx); done {
			notices = append(notices, none...)
		}
	}
	executed := p.executed(append(append(append(exprsOf(sigs), measuredExpr), in.exprs...), append(st.exprs, c.gpus.exprs...)...)...)
	return c.frames(groups, a, executed, notices), nil
}

// capacityAnswer gathers the rows of the table and of the what-if.
type capacityAnswer struct {
	rows    []frames.CapacityRow
	whatIf  []frames.WhatIfRow
	fits    []frames.TwinFit
	servers []frames.CapacityRow // format servers: a row per server
}

// addWhatIf runs group i's twin and files its predictions in the answer;
// the notices say what it fitted, or why there is no what-if.
func (c capacityPlan) addWhatIf(a *capacityAnswer, i int, g vllm.CapacityGroup, e vllm.CapacityEstimate, in twinInputs, gl []string) []data.Notice {
	name := groupName(g.Labels, gl)
	if i >= maxTwinGroups {
		return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
			"%s: no what-if (a query runs %d at most, each about a second of CPU): filter to the models you are sizing.", name, maxTwinGroups)}}
	}
	m, err := c.twinModel(g, e, in, gl)
	if err == nil {
		var w whatIf
		if w, err = c.runWhatIf(m, e.Replicas); err == nil {
			c.fileWhatIf(a, i, w, e.Replicas)
			return append([]data.Notice{twinNotice(name, m)}, c.neededNotice(name, w)...)
		}
	}
	return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf("%s: no what-if: %v.", name, err)}}
}

// neededNotice says why no replica count is named.
func (c capacityPlan) neededNotice(name string, w whatIf) []data.Notice {
	if w.needed != nil || len(w.preds) == 0 {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
		"%s: no replica count up to %d meets the objective (%s p99 ≤ %gs at %.0f%% headroom) in the what-if: "+
			"the wait is not one more replicas shorten (long prefills, a KV cache too small), or the demand needs more.",
		name, w.searched, c.o.Wait, c.o.Threshold, 100*c.o.Headroom)}}
}

// fileWhatIf puts a what-if's predictions in row i and the curve.
func (c capacityPlan) fileWhatIf(a *capacityAnswer, i int, w whatIf, now int) {
	r := &a.rows[i]
	pick := c.objective()
	for _, p := range w.preds {
		a.whatIf = append(a.whatIf, frames.WhatIfRow{Group: r.Group, Replicas: int64(p.Replicas), QueueP99: p.QueueP99,
			TTFTP99: p.TTFTP99, Utilisation: p.Utilisation, PreemptionsPerSec: p.PreemptionsPerSec,
			Overloaded: p.Overloaded, Now: p.Replicas == now, Needed: w.needed != nil && p.Replicas == w.needed.Replicas})
		if v := pick(p); p.Replicas == now && !math.IsNaN(v) {
			r.PredictedNow = &v
		}
	}
	if w.needed != nil {
		n, v := int64(w.needed.Replicas), pick(*w.needed)
		r.Needed, r.PredictedNeeded = &n, &v
	}
	f := w.model.Fit
	a.fits = append(a.fits, frames.TwinFit{Group: r.Group, StepBaseMs: ms(f.Base), StepPerSeqMs: ms(f.PerSeq),
		StepPerPrefillTokenUs: float64(f.PerPrefillToken.Nanoseconds()) / 1e3, R2: f.R2, Observations: f.Points,
		BatchLimit: w.model.MaxNumSeqs, KVBlocks: w.model.NumGPUBlocks, BlockSize: w.model.BlockSize})
}

// measured is the objective's p99 over the range per group key; a failed
// probe leaves the column empty rather than failing the answer.
func (c capacityPlan) measured(ctx context.Context, expr string, gl []string) map[string]float64 {
	v, _, err := c.memo.instantQuery(ctx, expr, c.timeRange.End, c.timeRange.Step)
	out := map[string]float64{}
	if err != nil {
		return out
	}
	for _, s := range v {
		ls := make(map[string]string, len(gl))
		for _, l := range gl {
			ls[l] = string(s.Metric[model.LabelName(l)])
		}
		out[capacityKey(ls, gl)] = float64(s.Value)
	}
	return out
}

// row turns one group's estimate into its table row.
func (c capacityPlan) row(g vllm.CapacityGroup, e vllm.CapacityEstimate, gl []string, measured map[string]float64) frames.CapacityRow {
	r := frames.CapacityRow{ReplicasNow: int64(e.Replicas), Arrivals: e.Arrivals, ArrivalsNow: e.ArrivalsNow,
		PeakToMean: e.PeakToMean, PromptTPS: e.PromptTPS, GenerationTPS: e.GenerationTPS, Waiting: e.Waiting,
		PerReplica: e.PerReplica, PerReplicaTokens: e.PerReplicaTokens, SaturatedSteps: int64(e.SaturatedSteps),
		LowerBound: e.LowerBound}
	for _, l := range gl {
		r.Group = append(r.Group, g.Labels[l])
	}
	if d := vllm.DesiredReplicas(e.ArrivalsNow, e.Waiting, e.PerReplica, c.o.Headroom, c.o.DrainDuration); d > 0 {
		v := int64(d)
		r.Desired = &v
	}
	if v, ok := measured[capacityKey(g.Labels, gl)]; ok {
		r.MeasuredP99 = &v
	}
	c.efficiency(&r, g, e)
	return r
}

// efficiency prices the range's GPU time: each server's answering time ×
// its GPUs (the node agents' count, else the gpusPerServer setting); GPUs
// per server is their mean over the group's answering time, rounded.
func (c capacityPlan) efficiency(r *frames.CapacityRow, g vllm.CapacityGroup, e vllm.CapacityEstimate) {
	cost := c.settings.cost
	r.GPUsPerServer = int64(cost.GPUsPerServer)
	gpuSeconds := vllm.GPUSeconds(g, c.timeRange.Step, c.gpus.gpusOf(cost.GPUsPerServer))
	if gpuSeconds <= 0 || e.ServerSeconds <= 0 {
		return
	}
	r.GPUsPerServer = int64(math.Round(gpuSeconds / e.ServerSeconds))
	joules, ok := vllm.EnergyJoules(g, c.timeRange.Step, c.gpus.power)
	r.EnergyPerMTokens = kWhPerMTokens(joules, ok, e.GeneratedTokens)
	idle, perGPU := e.IdleShare, e.GeneratedTokens/gpuSeconds
	r.IdleShare, r.TokensPerGPU = &idle, &perGPU
	if cost.GPUHourlyCost > 0 {
		v := idle * gpuSeconds / 3600 * cost.GPUHourlyCost
		r.IdleCost = &v
	}
	if e.GeneratedTokens <= 0 {
		return
	}
	perM := gpuSeconds / (e.GeneratedTokens / 1e6)
	r.GPUSecondsPerMTokens = &perM
	if cost.GPUHourlyCost > 0 {
		v := perM / 3600 * cost.GPUHourlyCost
		r.CostPerMTokens = &v
	}
}

// serverRows are a group's efficiency columns per server: each server
// estimated as a group of its own, over the same steps.
func (c capacityPlan) serverRows(g vllm.CapacityGroup, gl []string) []frames.CapacityRow {
	rows := make([]frames.CapacityRow, 0, len(g.Servers))
	seconds := c.timeRange.End.Sub(c.timeRange.Start).Seconds()
	for _, srv := range g.Servers {
		one := g
		one.Servers = []vllm.CapacityServer{srv}
		e := vllm.EstimateCapacity(one, c.timeRange.Step)
		r := frames.CapacityRow{Server: srv.Name}
		for _, l := range gl {
			r.Group = append(r.Group, g.Labels[l])
		}
		if seconds > 0 {
			r.GenerationTPS = e.GeneratedTokens / seconds
		}
		c.efficiency(&r, one, e)
		rows = append(rows, r)
	}
	return rows
}

// groupNotices say where a group's figures are weaker than they look.
func (c capacityPlan) groupNotices(g vllm.CapacityGroup, e vllm.CapacityEstimate, gl []string) []data.Notice {
	name := groupName(g.Labels, gl)
	var out []data.Notice
	if e.LowerBound {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: vllm.CapacityLowerBoundText(name, e.SaturatedSteps)})
	}
	if len(e.Stalled) > 0 {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
			"%s: %s not counted as replicas: work queued or running and nothing finished or generated at the range's end (stalled).",
			name, strings.Join(e.Stalled, ", "))})
	}
	return out
}

// frames builds the answer the format asks for: the table, the what-if
// and the demand series (both; the table carries the notices), or one of
// them with the notices.
func (c capacityPlan) frames(groups []vllm.CapacityGroup, a capacityAnswer, executed string, notices []data.Notice) data.Frames {
	gl := c.builder.GroupLabels(c.query.Grouping)
	fo := frames.CapacityOptions{Columns: capacityColumns(gl), Objective: c.o.Wait, Executed: executed, Notices: notices}
	so := frames.SeriesOptions{Legend: c.query.Legend, GroupLabels: gl, Unit: "reqps", Executed: executed, Notices: notices}
	switch c.o.Format {
	case "table":
		return data.Frames{frames.CapacityTable(a.rows, fo)}
	case "whatif":
		return data.Frames{frames.CapacityWhatIf(a.whatIf, a.fits, fo)}
	case "servers":
		return data.Frames{frames.CapacityServerTable(a.servers, fo)}
	case "series":
		counts := append(capacityCounts(groups, a.rows), stackCounts(groups, a.rows)...)
		return frames.TimeSeries(append(vllm.CapacityDemand(groups, c.timeRange.Step), counts...), so)
	}
	table := frames.CapacityTable(a.rows, fo)
	fo.Notices, so.Notices = nil, nil
	out := data.Frames{table, frames.CapacityWhatIf(a.whatIf, a.fits, fo)}
	return append(out, frames.TimeSeries(vllm.CapacityDemand(groups, c.timeRange.Step), so)...)
}

// capacityCounts are each group's replicas now, needed and desired as
// one-sample series (the counts a row leaves empty are left out).
func capacityCounts(groups []vllm.CapacityGroup, rows []frames.CapacityRow) []*series.Series {
	var out []*series.Series
	for i, g := range groups {
		r := rows[i]
		out = append(out, vllm.CapacityCount(g, "replicas_now", float64(r.ReplicasNow)))
		if r.Needed != nil {
			out = append(out, vllm.CapacityCount(g, "replicas_needed", float64(*r.Needed)))
		}
		if r.Desired != nil {
			out = append(out, vllm.CapacityCount(g, "desired_replicas", float64(*r.Desired)))
		}
	}
	return out
}

// capacityColumns names the group columns as users know them.
func capacityColumns(gl []string) []string {
	out := make([]string, len(gl))
	for i, l := range gl {
		out[i] = l
		if l == "model_name" {
			out[i] = "model"
		}
	}
	return out
}

// groupName is a group as a notice names it ("model llama-8b", "the fleet").
func groupName(ls map[string]string, gl []string) string {
	if len(gl) == 0 {
		return "The fleet"
	}
	parts := make([]string, len(gl))
	for i, l := range gl {
		parts[i] = capacityColumns([]string{l})[0] + " " + ls[l]
	}
	return strings.Join(parts, ", ")
}

func capacityKey(ls map[string]string, gl []string) string {
	var b strings.Builder
	for _, l := range gl {
		b.WriteString(ls[l] + "\x00")
	}
	return b.String()
}
