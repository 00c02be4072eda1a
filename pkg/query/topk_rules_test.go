package query

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rankSample is a ranking answer's sample for instance, tagged ("" for none).
func rankSample(instance, tagged string, v float64) *model.Sample {
	m := model.Metric{"instance": model.LabelValue(instance)}
	if tagged != "" {
		m[vllm.SignalTagLabel] = model.LabelValue(tagged)
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v)}
}

// TestJoinRank: the parts' per-group aggregations join as one pass over
// both parts' steps would: max of the maxima (a NaN gives way to a
// number, as in max_over_time), avg as the summed sums over the summed
// counts; a group in one part only keeps that part's; the tag is dropped.
func TestJoinRank(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name, aggregation string
		parts             []model.Vector
		want              map[string]float64
	}{
		{"max of both maxima", "max",
			[]model.Vector{{rankSample("a", "", 5), rankSample("b", "", 1)}, {rankSample("a", "", 2), rankSample("b", "", 4)}},
			map[string]float64{"a": 5, "b": 4}},
		{"max: a group in one part only", "max",
			[]model.Vector{{rankSample("a", "", 5)}, {rankSample("b", "", 4)}}, map[string]float64{"a": 5, "b": 4}},
		{"max: NaN gives way to a number", "max",
			[]model.Vector{{rankSample("a", "", nan), rankSample("b", "", 3)}, {rankSample("a", "", 2), rankSample("b", "", nan)}},
			map[string]float64{"a": 2, "b": 3}},
		{"max: NaN in both parts", "max", []model.Vector{{rankSample("a", "", nan)}, {rankSample("a", "", nan)}}, map[string]float64{"a": nan}},
		{"avg: sums over counts", "avg",
			[]model.Vector{
				{rankSample("a", vllm.RankPartSum, 10), rankSample("a", vllm.RankPartCount, 2), rankSample("b", vllm.RankPartSum, 0), rankSample("b", vllm.RankPartCount, 2)},
				{rankSample("a", vllm.RankPartSum, 0), rankSample("a", vllm.RankPartCount, 2), rankSample("b", vllm.RankPartSum, 12), rankSample("b", vllm.RankPartCount, 6)},
			},
			map[string]float64{"a": 2.5, "b": 1.5}},
		{"avg: a group in one part only", "avg",
			[]model.Vector{{rankSample("a", vllm.RankPartSum, 9), rankSample("a", vllm.RankPartCount, 3)}, {}}, map[string]float64{"a": 3}},
		{"avg: NaN stays NaN, as in avg_over_time", "avg",
			[]model.Vector{{rankSample("a", vllm.RankPartSum, nan), rankSample("a", vllm.RankPartCount, 1)}, {rankSample("a", vllm.RankPartSum, 4), rankSample("a", vllm.RankPartCount, 1)}},
			map[string]float64{"a": nan}},
		{"nothing ranked", "max", []model.Vector{{}, {}}, map[string]float64{}},
		{"avg: a group no step counted is not ranked", "avg",
			[]model.Vector{{rankSample("a", vllm.RankPartSum, 0)}, {rankSample("b", vllm.RankPartSum, 6), rankSample("b", vllm.RankPartCount, 3)}},
			map[string]float64{"b": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := joinRank(tt.aggregation, tt.parts)
			require.Len(t, got, len(tt.want))
			for _, s := range got {
				require.NotContains(t, s.Metric, model.LabelName(vllm.SignalTagLabel))
				want := tt.want[string(s.Metric["instance"])]
				if math.IsNaN(want) {
					require.True(t, math.IsNaN(float64(s.Value)), "%s", s.Metric)
					continue
				}
				require.InDelta(t, want, float64(s.Value), 1e-12, "%s", s.Metric)
			}
		})
	}
}

// TestRankPlanFor: the ranking is the raw or the all-rules topk expression
// at the range's end when it is not mixed, when it ranks by the last value
// (the rules' at the end), or when the rules began before the ranking's
// first step; mixed, it is the raw part at the last step before the split
// over the steps from the ranking's lower end and the rules part at the
// end over the steps from the split, joined by the aggregation; when the
// raw part would be the lower end alone it stays raw.
func TestRankPlanFor(t *testing.T) {
	end := time.Unix(1_800_000_000, 0) // 08:00:00 UTC, on the 30s grid
	step, rng := 30*time.Second, time.Hour
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	u := ruleUse{rs: vllm.RuleSet{Prefix: "engine:"}}
	tests := []struct {
		name, aggregation string
		tr                topkRules
		// want: per part, the expression's start and when it runs.
		want []rankPart
		join string
	}{
		{"raw", "max", topkRules{}, []rankPart{{"topk(3, max_over_time((sum by (instance) (vllm:", end}}, ""},
		{"rules over the whole range", "max", topkRules{u: u, on: true}, []rankPart{{"topk(3, max_over_time((sum by (instance) (engine:", end}}, ""},
		{"mixed max", "max", topkRules{u: u, on: true, from: end.Add(-20 * time.Minute)}, []rankPart{
			{"max_over_time((sum by (instance) (vllm:num_requests_waiting))[2370s:30s])", end.Add(-20*time.Minute - step)},
			{"max_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[1229999ms:30s])", end}}, "max"},
		{"mixed avg", "avg", topkRules{u: u, on: true, from: end.Add(-20 * time.Minute)}, []rankPart{
			{`label_replace(sum_over_time((sum by (instance) (vllm:num_requests_waiting))[2370s:30s]), "vllm_signal", "sum", "", "") or `, end.Add(-20*time.Minute - step)},
			{`label_replace(sum_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[1229999ms:30s]), "vllm_signal", "sum", "", "") or `, end}}, "avg"},
		{"mixed last: the rules' value at the end", "last", topkRules{u: u, on: true, from: end.Add(-20 * time.Minute)},
			[]rankPart{{"topk(3, sum by (instance) (engine:", end}}, ""},
		{"rules from the second step: the raw part would be the lower end alone", "max", topkRules{u: u, on: true, from: end.Add(-rng + step)},
			[]rankPart{{"topk(3, max_over_time((sum by (instance) (vllm:", end}}, ""},
		{"rules from before the ranking's lower end", "max", topkRules{u: u, on: true, from: end.Add(-rng - step)},
			[]rankPart{{"topk(3, max_over_time((sum by (instance) (engine:", end}}, ""},
		{"rules from two steps in", "max", topkRules{u: u, on: true, from: end.Add(-rng + 2*step)}, []rankPart{
			{"max_over_time((sum by (instance) (vllm:num_requests_waiting))[30s:30s])", end.Add(-rng + step)},
			{"max_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[3569999ms:30s])", end}}, "max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := topkPlan{plan: &plan{builder: b, window: "60s", timeRange: interval.Result{End: end, Step: step},
				query: models.Query{Grouping: models.GroupInstance}}, o: models.TopKOptions{RankBy: "waiting", Aggregation: tt.aggregation, K: 3}}
			raw, err := b.TopKRanking("waiting", tt.aggregation, 3, models.GroupInstance, models.Filters{}, "60s", "3600s", "30s")
			require.NoError(t, err)
			got, err := p.rankPlanFor(tt.tr, raw, rng)
			require.NoError(t, err)
			require.Equal(t, tt.join, got.join)
			require.Len(t, got.parts, len(tt.want))
			for i, w := range tt.want {
				require.True(t, strings.HasPrefix(got.parts[i].expr, w.expr), "part %d: %s", i, got.parts[i].expr)
				require.True(t, w.at.Equal(got.parts[i].at), "part %d at %v, want %v", i, got.parts[i].at, w.at)
			}
		})
	}
}

// topkProm is mixProm answering topK's ranking too, for the instances a,
// b and c: each part's aggregation (raw before the rules, recorded after)
// per instance, so that the raw part alone ranks a and c first, the rules
// part alone b and c, and both together (max) a and b; its range queries
// answer every instance's series, 1 raw, 2 recorded.
type topkProm struct {
	*mixProm
	mu      sync.Mutex
	instant []string // "expr at"
}

var topkParts = map[string]map[string]float64{
	"raw":   {"a": 5, "b": 0, "c": 3},
	"rules": {"a": 0, "b": 4, "c": 3},
}

func (p *topkProm) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	if !strings.Contains(expr, "num_requests_waiting") || strings.HasPrefix(expr, "min(min_over_time(timestamp(") || strings.HasPrefix(expr, "count(") {
		return p.mixProm.Query(ctx, expr, ts)
	}
	p.mu.Lock()
	p.instant = append(p.instant, expr+" at "+ts.UTC().Format("15:04:05"))
	p.mu.Unlock()
	part := topkParts["raw"]
	if strings.Contains(expr, "engine:") {
		part = topkParts["rules"]
	}
	var out model.Vector
	for inst, v := range part {
		switch {
		case strings.Contains(expr, "sum_over_time("):
			out = append(out, rankSample(inst, vllm.RankPartSum, 2*v), rankSample(inst, vllm.RankPartCount, 2))
		case strings.HasPrefix(expr, "topk(") || strings.HasPrefix(expr, "max_over_time("):
			out = append(out, rankSample(inst, "", v))
		}
	}
	return out, nil, nil
}

func (p *topkProm) QueryRange(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	m, warn, err := p.mixProm.QueryRange(ctx, expr, r)
	var out prom.Matrix
	for _, s := range m {
		for _, inst := range []string{"a", "b", "c"} {
			ls := map[string]string{"instance": inst}
			for k, v := range s.Labels {
				ls[k] = v
			}
			out = append(out, &prom.Series{Labels: ls, Times: s.Times, Values: s.Values})
		}
	}
	return out, warn, err
}

func (p *topkProm) asked() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.instant, "\n")
}

// TestTopKRuleMix: topK over a range that starts before the rules' first
// evaluation ranks by both parts joined (the raw part up to the last step
// before the split, the rules' from it) and answers the ranked series raw
// before the split and from the rules after it; it says from when, and
// shows every expression. Ranked by the last value, the ranking is the
// rules' at the end alone. Rules from before the range, or from after
// it, plan as without mixing.
func TestTopKRuleMix(t *testing.T) {
	now := time.Unix(1_800_000_000, 0) // 08:00:00 UTC
	topk := func(agg string) string {
		return `{"queryType":"topk","rankBy":"waiting","k":2,"aggregation":"` + agg + `","grouping":"instance"}`
	}
	tests := []struct {
		name, aggregation string
		first             time.Duration // the rules' first evaluation, before now
		asked             []string      // instant ranking queries, by start and time
		ranked            []string      // instance=value, worst first
		notice            string
	}{
		{"max, mixed: the worst of both parts", "max", 20*time.Minute + 7*time.Second,
			[]string{"max_over_time((sum by (instance) (vllm:num_requests_waiting))[2370s:30s]) at 07:39:30",
				"max_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[1229999ms:30s]) at 08:00:00"},
			[]string{"a=5", "b=4"}, "Answered from recording rules from 07:40:00 UTC on"},
		{"avg, mixed: both parts' steps", "avg", 20*time.Minute + 7*time.Second,
			[]string{"label_replace(sum_over_time((sum by (instance) (vllm:num_requests_waiting))[2370s:30s])",
				"label_replace(sum_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[1229999ms:30s])"},
			[]string{"c=3", "a=2.5"}, "Answered from recording rules from 07:40:00 UTC on"},
		{"last, mixed: the rules' at the end", "last", 20*time.Minute + 7*time.Second,
			[]string{"topk(2, sum by (instance) (engine:vllm_num_requests_waiting:sum)) at 08:00:00"},
			[]string{"b=4", "c=3"}, "Answered from recording rules from 07:40:00 UTC on"},
		{"rules before the range", "max", 2 * time.Hour,
			[]string{"topk(2, max_over_time((sum by (instance) (engine:vllm_num_requests_waiting:sum))[3600s:30s])) at 08:00:00"},
			[]string{"b=4", "c=3"}, "Answered from recording rules (engine:…, every 30s)"},
		{"rules after the range", "max", -time.Minute,
			[]string{"topk(2, max_over_time((sum by (instance) (vllm:num_requests_waiting))[3600s:30s])) at 08:00:00"},
			[]string{"a=5", "c=3"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &topkProm{mixProm: &mixProm{first: now.Add(-tt.first)}}
			e := topkMixExecutor(t, fp, now)
			r := mixRun(t, e, topk(tt.aggregation), now.Add(-time.Hour), now)
			asked := fp.asked()
			require.Len(t, strings.Split(asked, "\n"), len(tt.asked), asked)
			for _, w := range tt.asked {
				require.Contains(t, asked, w)
			}
			table := r.Frames[len(r.Frames)-1]
			require.Equal(t, tt.ranked, rankedValues(t, table.Fields))
			require.Equal(t, len(tt.asked), strings.Count(table.Meta.ExecutedQueryString, "\n"), "the table shows every ranking expression")
			split := now.Add(-tt.first).Add(29 * time.Second).Truncate(30 * time.Second)
			if tt.notice == "" {
				require.NotContains(t, noticeTextsOf(r.Frames), "recording rules")
				split = now.Add(time.Hour) // raw at every step
			} else {
				require.Contains(t, noticeTextsOf(r.Frames), tt.notice)
			}
			requireMixedColumns(t, r.Frames[:len(r.Frames)-1], now.Add(-time.Hour), now, split)
			if split.After(now.Add(-time.Hour)) && split.Before(now) {
				ranges := strings.Split(fp.mixProm.asked(), "\n")
				require.True(t, hasLine(ranges, "engine:", " "+split.UTC().Format("15:04:05")+" 08:00:00"), "series on the rules from the split: %s", fp.mixProm.asked())
				require.True(t, hasLine(ranges, "vllm:", " 07:00:00 "+split.Add(-30*time.Second).UTC().Format("15:04:05")), "raw before it: %s", fp.mixProm.asked())
			}
		})
	}
}

// topkMixExecutor is mixExecutor over topkProm.
func topkMixExecutor(t *testing.T, fp *topkProm, now time.Time) *Executor {
	t.Helper()
	e := mixExecutor(t, fp.mixProm, now)
	e.Prom = fp
	e.Detector = NewDetector(fp, e.Settings.MetricPrefix, e.Now)
	return e
}

// rankedValues reads the rank table's rows as instance=value.
func rankedValues(t *testing.T, fields []*data.Field) []string {
	t.Helper()
	var inst, val *data.Field
	for _, f := range fields {
		switch f.Name {
		case "instance":
			inst = f
		case "waiting":
			val = f
		}
	}
	require.NotNil(t, inst)
	require.NotNil(t, val)
	out := make([]string, inst.Len())
	for i := range out {
		v, err := val.FloatAt(i)
		require.NoError(t, err)
		out[i] = inst.At(i).(string) + "=" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return out
}
