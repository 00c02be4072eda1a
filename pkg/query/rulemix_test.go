package query

import (
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func TestRuleMixSplitStep(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	end := start.Add(time.Hour)
	step := 30 * time.Second
	tests := []struct {
		name  string
		first time.Time
		want  time.Time
		ok    bool
	}{
		{"before the start: rules only", start.Add(-time.Minute), start, true},
		{"at the start: rules only", start, start, true},
		{"just after the start: the next step", start.Add(time.Millisecond), start.Add(step), true},
		{"on a step", start.Add(20 * time.Minute), start.Add(20 * time.Minute), true},
		{"between steps, with the group's phase", start.Add(20*time.Minute + 7*time.Second), start.Add(20*time.Minute + step), true},
		{"inside the last step", end.Add(-time.Second), end, true},
		{"at the end: raw", end, time.Time{}, false},
		{"after the end: raw", end.Add(time.Minute), time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := splitStep(start, end, step, tt.first)
			require.Equal(t, tt.ok, ok)
			require.True(t, tt.want.Equal(got), "split %v, want %v", got, tt.want)
			if ok {
				require.Zero(t, got.Sub(start)%step, "on the query's grid")
				require.False(t, got.Before(tt.first) && got.After(start), "no rules step before the first evaluation")
			}
		})
	}
}

// steps is a series of the labels with one point per step in [from, to].
func steps(ls map[string]string, from, to time.Time, step time.Duration, v float64) *prom.Series {
	s := &prom.Series{Labels: ls}
	for t := from; !t.After(to); t = t.Add(step) {
		s.Times, s.Values = append(s.Times, t), append(s.Values, v)
	}
	return s
}

func TestRuleMixSplice(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	step := 30 * time.Second
	split, end := start.Add(10*step), start.Add(20*step)
	a, b := map[string]string{"model_name": "a"}, map[string]string{"model_name": "b"}
	tests := []struct {
		name       string
		raw, rules prom.Matrix
		// want: per model, the values in step order (1 raw, 2 rules).
		want map[string][]float64
	}{
		{"both parts of two series", prom.Matrix{steps(a, start, split.Add(-step), step, 1), steps(b, start, split.Add(-step), step, 1)},
			prom.Matrix{steps(b, split, end, step, 2), steps(a, split, end, step, 2)},
			map[string][]float64{"a": ramp(10, 11), "b": ramp(10, 11)}},
		{"a series that ends before the rules", prom.Matrix{steps(a, start, split.Add(-step), step, 1), steps(b, start, start.Add(3*step), step, 1)},
			prom.Matrix{steps(a, split, end, step, 2)},
			map[string][]float64{"a": ramp(10, 11), "b": ramp(4, 0)}},
		{"a series the rules start", prom.Matrix{steps(a, start, split.Add(-step), step, 1)},
			prom.Matrix{steps(a, split, end, step, 2), steps(b, split.Add(step), end, step, 2)},
			map[string][]float64{"a": ramp(10, 11), "b": ramp(0, 10)}},
		{"parts that overlap the split are trimmed", prom.Matrix{steps(a, start, split, step, 1)},
			prom.Matrix{steps(a, split.Add(-2*step), end, step, 2)},
			map[string][]float64{"a": ramp(10, 11)}},
		{"no rules answer", prom.Matrix{steps(a, start, split.Add(-step), step, 1)}, nil, map[string][]float64{"a": ramp(10, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rawCols := cloneValues(tt.raw)
			got := spliceAt(tt.raw, tt.rules, start, split, end)
			require.Len(t, got, len(tt.want))
			for _, s := range got {
				require.Equal(t, tt.want[s.Labels["model_name"]], s.Values, s.Labels["model_name"])
				for i := 1; i < len(s.Times); i++ {
					require.Equal(t, step, s.Times[i].Sub(s.Times[i-1]), "one point per step, none twice")
				}
			}
			require.Equal(t, rawCols, cloneValues(tt.raw), "the parts' columns are not written")
		})
	}
}

// ramp is n raw values (1) then m rules values (2).
func ramp(n, m int) []float64 {
	out := make([]float64, 0, n+m)
	for range n {
		out = append(out, 1)
	}
	for range m {
		out = append(out, 2)
	}
	return out
}

func cloneValues(m prom.Matrix) [][]float64 {
	out := make([][]float64, len(m))
	for i, s := range m {
		out[i] = append([]float64(nil), s.Values...)
	}
	return out
}

// mixProm is a store with vLLM's series and the shipped recording rules
// evaluated every 30s from first (with a phase of its own) on. Range
// queries answer one series per model on every step, 1 on raw series and
// 2 on recorded ones, tagged as the expression tags them; it records what
// it is asked.
type mixProm struct {
	first  time.Time
	mu     sync.Mutex
	ranges []string // "expr start end"
	probes int      // first-evaluation probes
}

func (p *mixProm) MetricNames(_ context.Context, sel string, _, _ time.Time) ([]string, error) {
	if strings.Contains(sel, "engine:") {
		return vllm.RuleNames("engine:"), nil
	}
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:time_to_first_token_seconds_bucket",
		"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count"}, nil
}

var probeRangeRE = regexp.MustCompile(`\)\[(\w+):\w+\]\)\)$`)

func (p *mixProm) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	one := func(v float64) model.Vector { return model.Vector{{Value: model.SampleValue(v)}} }
	seen := !ts.Before(p.first)
	switch {
	case strings.HasPrefix(expr, "min(min_over_time(timestamp("):
		p.mu.Lock()
		p.probes++
		p.mu.Unlock()
		rng, _ := model.ParseDuration(probeRangeRE.FindStringSubmatch(expr)[1])
		if seen && p.first.After(ts.Add(-time.Duration(rng))) {
			return one(float64(p.first.UnixMilli()) / 1000), nil, nil
		}
	case !seen, strings.Contains(expr, `pod!=""`):
	case strings.HasPrefix(expr, "max(timestamp("):
		return one(float64(ts.Add(-7 * time.Second).Truncate(30 * time.Second).Add(7 * time.Second).Unix())), nil, nil
	case strings.HasPrefix(expr, "count(engine:"):
		return one(4), nil, nil
	}
	return nil, nil, nil
}

var tagRE = regexp.MustCompile(`"` + vllm.SignalTagLabel + `", "([a-z0-9_]+)"`)

func (p *mixProm) QueryRange(_ context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	p.mu.Lock()
	p.ranges = append(p.ranges, expr+" "+r.Start.UTC().Format("15:04:05")+" "+r.End.UTC().Format("15:04:05"))
	p.mu.Unlock()
	v := 1.0
	if strings.Contains(expr, "engine:") {
		v = 2
	}
	tags := []string{""}
	if m := tagRE.FindAllStringSubmatch(expr, -1); m != nil {
		tags = tags[:0]
		for _, t := range m {
			tags = append(tags, t[1])
		}
	}
	var out prom.Matrix
	for _, tag := range tags {
		ls := map[string]string{"model_name": "m"}
		if tag != "" {
			ls[vllm.SignalTagLabel] = tag
		}
		out = append(out, steps(ls, r.Start, r.End, r.Step, v))
	}
	return out, nil, nil
}

func (p *mixProm) asked() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.ranges, "\n")
}

// TestRuleMixPlanning: a range that starts before the rules' first
// evaluation reads raw series up to the first step at or after it and the
// rules from there, as one answer with the raw answer's series and steps,
// says so, and shows both expressions; a range the rules cover, or one
// that ends before they start, is planned as without mixing. The first
// evaluation is probed once and remembered for the next refresh.
func TestRuleMixPlanning(t *testing.T) {
	now := time.Unix(1_800_000_000, 0) // 2027-01-15 08:00:00 UTC, on the 30s grid
	wait := `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`
	queue := `{"queryType":"queue","grouping":"model"}`
	tests := []struct {
		name, query string
		first       time.Duration // the rules' first evaluation, before now
		// split is when the rules answer from, before now; 0: raw only,
		// an hour: rules only.
		split  time.Duration
		notice string
	}{
		{"wait time, rules since 20m7s", wait, 20*time.Minute + 7*time.Second, 20 * time.Minute,
			"Answered from recording rules from 07:40:00 UTC on (engine:…, every 30s): each step shows the rules' latest evaluation at or before it; raw series before, when the rules had not run yet."},
		{"wait time, rules on a step", wait, 45 * time.Minute, 45 * time.Minute, "Answered from recording rules from 07:15:00 UTC on"},
		{"queue, rules since 20m7s", queue, 20*time.Minute + 7*time.Second, 20 * time.Minute, "Answered from recording rules from 07:40:00 UTC on"},
		{"rules before the range", wait, 2 * time.Hour, time.Hour, "Answered from recording rules (engine:…, every 30s)"},
		{"rules after the range", wait, -time.Minute, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &mixProm{first: now.Add(-tt.first)}
			e := mixExecutor(t, fp, now)
			r := mixRun(t, e, tt.query, now.Add(-time.Hour), now)
			asked := strings.Split(fp.asked(), "\n")
			splitAt := now.Add(-tt.split).UTC().Format("15:04:05")
			switch tt.split {
			case 0:
				require.NotContains(t, fp.asked(), "engine:", "raw only")
				require.NotContains(t, noticeTextsOf(r.Frames), "recording rules")
			case time.Hour:
				require.True(t, hasLine(asked, "engine:", " 07:00:00 08:00:00"), "rules over the range: %s", fp.asked())
			default:
				require.True(t, hasLine(asked, "engine:", " "+splitAt+" 08:00:00"), "rules from the split: %s", fp.asked())
				require.False(t, hasLine(asked, "engine:", " 07:00:00 08:00:00"), "rules only from the split: %s", fp.asked())
				before := now.Add(-tt.split - 30*time.Second).UTC().Format("15:04:05")
				require.True(t, hasLine(asked, "vllm:", " 07:00:00 "+before), "raw before it: %s", fp.asked())
				lines := strings.Split(r.Frames[0].Meta.ExecutedQueryString, "\n")
				for i, l := range lines {
					if strings.Contains(l, "engine:") {
						require.NotContains(t, lines[i-1], "engine:", "each rules expression after its raw twin: %s", l)
					}
				}
			}
			if tt.notice != "" {
				require.Contains(t, noticeTextsOf(r.Frames), tt.notice)
			}
			split := now.Add(-tt.split)
			if tt.split == 0 {
				split = now.Add(time.Hour) // raw at every step
			}
			requireMixedColumns(t, r.Frames, now.Add(-time.Hour), now, split)
		})
	}
	t.Run("the first evaluation is probed once", func(t *testing.T) {
		fp := &mixProm{first: now.Add(-20*time.Minute - 7*time.Second)}
		e := mixExecutor(t, fp, now)
		mixRun(t, e, wait, now.Add(-time.Hour), now)
		mixRun(t, e, wait, now.Add(-time.Hour+30*time.Second), now.Add(30*time.Second))
		r := mixRun(t, e, queue, now.Add(-time.Hour+time.Minute), now.Add(time.Minute))
		require.Equal(t, 3, fp.probes, "one per recorded name (the histogram's _sum, running, waiting), and none again for the second range")
		require.Contains(t, noticeTextsOf(r.Frames), "Answered from recording rules from 07:40:00 UTC on")
	})
}

// requireMixedColumns: every series has one point per step of [start,
// end], 1 (raw) before split and 2 (rules) from it on.
// hasLine: some asked range has the expression part and ends with the range.
func hasLine(asked []string, part, rng string) bool {
	for _, l := range asked {
		if strings.Contains(l, part) && strings.HasSuffix(l, rng) && (part == "engine:" || !strings.Contains(l, "engine:")) {
			return true
		}
	}
	return false
}

func requireMixedColumns(t *testing.T, fs data.Frames, start, end, split time.Time) {
	t.Helper()
	n := 0
	for _, f := range fs {
		if len(f.Fields) < 2 {
			continue
		}
		require.Equal(t, int(end.Sub(start)/(30*time.Second))+1, f.Rows(), "%s: every step once", f.Name)
		for i := range f.Rows() {
			at := f.Fields[0].At(i).(time.Time)
			require.True(t, start.Add(time.Duration(i)*30*time.Second).Equal(at), "%s: step %d at %v", f.Name, i, at)
			v, err := f.Fields[1].FloatAt(i)
			require.NoError(t, err)
			want := 2.0
			if at.Before(split) {
				want = 1
			}
			if math.IsNaN(v) {
				continue // a signal no fake answers (the live wait)
			}
			require.Equal(t, want, v, "%s at %v", f.Name, at)
			n++
		}
	}
	require.Positive(t, n)
}

func mixExecutor(t *testing.T, fp *mixProm, now time.Time) *Executor {
	t.Helper()
	s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
	require.NoError(t, err)
	clock := func() time.Time { return now }
	return &Executor{Prom: fp, Settings: s, Detector: NewDetector(fp, s.MetricPrefix, clock), Now: clock}
}

func mixRun(t *testing.T, e *Executor, js string, from, to time.Time) backend.DataResponse {
	t.Helper()
	q := backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), Interval: 30 * time.Second, MaxDataPoints: 1000,
		TimeRange: backend.TimeRange{From: from, To: to}}
	r := e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}}).Responses["A"]
	require.NoError(t, r.Error)
	require.NotEmpty(t, r.Frames)
	return r
}

func noticeTextsOf(fs data.Frames) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				b.WriteString(n.Text + "\n")
			}
		}
	}
	return b.String()
}
