package query

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The topk type: its plan (topkPlan), its handler, the ranking and the
// ranked table; its plan on the recording rules is topk_rules.go.

// rankUnits are the units of the signals topk can rank by.
var rankUnits = map[string]string{
	"waiting": string(vllm.UnitRequests), "running": string(vllm.UnitRequests),
	"kv_usage": string(vllm.UnitPercent), "wait_p99": string(vllm.UnitSeconds), "preemption_rate": "ops",
}

// ranked is one group picked by the ranking query.
type ranked struct {
	instance, engine string
	value            float64
}

// topk ranks over the whole range with one instant query, then fetches the
// series of exactly the ranked groups with one range query. A range
// topk() would return every group that was ever in the top k. On the
// recording rules both may be mixed with raw series (topk_rules.go).
func (p *plan) topk(ctx context.Context, o models.TopKOptions) (data.Frames, error) {
	return topkPlan{plan: p, o: o}.answer(ctx)
}

// topkPlan is a topk query's plan: the shared plan and the type's options.
type topkPlan struct {
	*plan
	o models.TopKOptions
}

// answer is topk's answer (see topk).
func (p topkPlan) answer(ctx context.Context) (data.Frames, error) {
	rng := max(p.timeRange.Range, p.timeRange.Step).Round(p.timeRange.Step)
	rankRaw, err := p.builder.TopKRanking(p.o.RankBy, p.o.Aggregation, p.o.K, p.query.Grouping, p.query.Filters, p.window, interval.PromDuration(rng), interval.PromDuration(p.timeRange.Step))
	if err != nil {
		return nil, err
	}
	tr, ruleNotes := p.topkRules(ctx, rankRaw)
	ranking, err := p.rankPlanFor(tr, rankRaw, rng)
	if err != nil {
		return nil, err
	}
	vec, warn, err := p.rankVector(ctx, ranking)
	if err != nil {
		return nil, err
	}
	top := p.rank(vec)
	rankNotices := p.signalNotices(ctx, map[string]bool{"value": len(vec) > 0}, []need{{key: rankSignals[p.o.RankBy], tags: []string{"value"},
		without: "nothing can be ranked by " + p.o.RankBy}}, rankSignals[p.o.RankBy])
	seriesRaw, err := p.builder.TopKSeries(p.o.RankBy, p.query.Grouping, p.query.Filters, p.window, instances(top))
	if err != nil {
		return nil, err
	}
	series := p.topkSeriesMix(tr, seriesRaw, instances(top))
	m, warn2, err := p.mixRange(ctx, series)
	if err != nil {
		return nil, err
	}
	values, info := p.split(m, top)
	out := frames.TimeSeries(values, frames.SeriesOptions{Unit: rankUnits[p.o.RankBy], Legend: p.query.Legend,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(append(ranking.exprs(), series.exprs()...)...),
		Notices: p.noticesFor(ruleNotes, warningNotices(warn), warningNotices(warn2), rankNotices)})
	if p.o.AsSeries {
		return out, nil
	}
	table := p.rankTable(ctx, p.rows(top, info), ranking.exprs(), ruleNotes, rankNotices)
	if p.o.Format == "table" {
		return data.Frames{table}, nil
	}
	return append(out, table), nil
}

// rankTable is the top-k table, each instance with its GPUs. It carries
// the GPU columns' notices, then the rules' and the ranking's.
func (p topkPlan) rankTable(ctx context.Context, rows []frames.RankRow, rankExprs []string, ruleNotes, rankNotices []data.Notice) *data.Frame {
	gpuNotices := attachGPUs(ctx, p.plan, rows, func(r *frames.RankRow) (string, **frames.GPUSummary) { return r.Instance, &r.GPU })
	return frames.RankTable(rows, frames.RankOptions{WithEngine: p.query.Grouping == models.GroupInstanceEngine,
		ValueName: p.o.RankBy, Unit: rankUnits[p.o.RankBy], Executed: p.executed(rankExprs...),
		Notices: slices.Concat(gpuNotices, ruleNotes, rankNotices)})
}

// rank orders the ranking result worst first (NaN last) and keeps k.
func (p topkPlan) rank(vec model.Vector) []ranked {
	out := make([]ranked, 0, len(vec))
	for _, s := range vec {
		out = append(out, ranked{instance: p.builder.InstanceOf(labelMap(s.Metric)), engine: string(s.Metric["engine"]), value: float64(s.Value)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].value, out[j].value
		if math.IsNaN(a) != math.IsNaN(b) {
			return !math.IsNaN(a)
		}
		if a != b {
			return a > b
		}
		return out[i].instance+"\x00"+out[i].engine < out[j].instance+"\x00"+out[j].engine
	})
	if len(out) > p.o.K {
		out = out[:p.o.K]
	}
	return out
}

func instances(top []ranked) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range top {
		if !seen[r.instance] {
			seen[r.instance] = true
			out = append(out, r.instance)
		}
	}
	if len(out) == 0 {
		// Nothing ranked: match no instance rather than every instance.
		return []string{"\x00no ranked instance"}
	}
	return out
}

// groupInfo is what the "engines" series says about one group.
type groupInfo struct {
	model   string
	engines int64
}

// split keeps the value series of ranked groups only (so exactly k come
// back), renames their signal to the rank signal, and reads model and
// engine count from the "engines" series.
// The matrix may be shared through the result cache, so renamed series
// are copies with their own labels; the columns are shared, read-only.
func (p topkPlan) split(m prom.Matrix, top []ranked) (prom.Matrix, map[string]groupInfo) {
	want := map[string]bool{}
	for _, r := range top {
		want[p.key(r.instance, r.engine)] = true
	}
	var values prom.Matrix
	info := map[string]groupInfo{}
	for _, s := range m {
		k := p.key(p.builder.InstanceOf(s.Labels), s.Labels["engine"])
		if !want[k] {
			continue
		}
		switch s.Labels[vllm.SignalTagLabel] {
		case "value":
			renamed := *s
			renamed.Labels = make(map[string]string, len(s.Labels))
			for name, v := range s.Labels {
				renamed.Labels[name] = v
			}
			renamed.Labels[vllm.SignalTagLabel] = p.o.RankBy
			values = append(values, &renamed)
		case "engines":
			gi := info[k]
			gi.model = joinModel(gi.model, s.Labels["model_name"])
			if n := len(s.Values); n > 0 {
				gi.engines += int64(s.Values[n-1])
			}
			info[k] = gi
		}
	}
	return values, info
}

func (p topkPlan) key(instance, engine string) string {
	if p.query.Grouping == models.GroupInstanceEngine {
		return instance + "\x00" + engine
	}
	return instance
}

func joinModel(have, add string) string {
	if have == "" || have == add {
		return add
	}
	return have + ", " + add
}

func (p topkPlan) rows(top []ranked, info map[string]groupInfo) []frames.RankRow {
	rows := make([]frames.RankRow, len(top))
	for i, r := range top {
		gi := info[p.key(r.instance, r.engine)]
		rows[i] = frames.RankRow{Rank: int64(i + 1), Instance: r.instance, Engine: r.engine, Model: gi.model, Engines: gi.engines, Value: r.value}
	}
	return rows
}

// labelMap is a sample's labels as the plain map Builder.InstanceOf reads.
func labelMap(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}
