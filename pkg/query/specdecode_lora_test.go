package query_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// stubProm answers range queries by the first key the expression
// contains, and instant queries likewise; anything else is empty.
type stubProm struct {
	ranges   map[string]prom.Matrix
	instants map[string]float64
}

func (s stubProm) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	for k, v := range s.instants {
		if strings.Contains(expr, k) {
			return model.Vector{{Metric: model.Metric{}, Value: model.SampleValue(v), Timestamp: model.TimeFromUnixNano(ts.UnixNano())}}, nil, nil
		}
	}
	return model.Vector{}, nil, nil
}

func (s stubProm) QueryRange(_ context.Context, expr string, _ v1.Range) (prom.Matrix, []string, error) {
	for k, m := range s.ranges {
		if strings.Contains(expr, k) {
			return m, nil, nil
		}
	}
	return nil, nil, nil
}

func (s stubProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running"}, nil
}

func stubExecutor(p stubProm) *query.Executor {
	return &query.Executor{Prom: p, Settings: goldenSettings(), Detector: query.NewDetector(p, "vllm:", time.Now)}
}

var stubTo = time.Unix(1_700_000_000, 0)

func series(t0 time.Time, ls map[string]string, values ...float64) *prom.Series {
	s := &prom.Series{Labels: ls}
	for i, v := range values {
		s.Times, s.Values = append(s.Times, t0.Add(time.Duration(i)*time.Second)), append(s.Values, v)
	}
	return s
}

func onlyNotice(t *testing.T, frames data.Frames) data.Notice {
	t.Helper()
	require.NotEmpty(t, frames)
	require.NotNil(t, frames[0].Meta)
	require.Len(t, frames[0].Meta.Notices, 1, noticeTexts(frames))
	return frames[0].Meta.Notices[0]
}

// TestSpecDecodeAbsentIsInfo: engines without speculative decoding get an
// info notice naming the counters and --speculative-config, not an error;
// engines that export them but drafted nothing are told apart.
func TestSpecDecodeAbsentIsInfo(t *testing.T) {
	tests := []struct {
		name     string
		instants map[string]float64
		severity data.NoticeSeverity
		want     []string
	}{
		{"not configured", map[string]float64{"count(last_over_time(vllm:num_requests_running": 4}, data.NoticeSeverityInfo,
			[]string{"--speculative-config", "vllm:spec_decode_num_draft_tokens_total", "not configured"}},
		{"configured but idle", map[string]float64{"count(last_over_time(vllm:num_requests_running": 4, "max(count_over_time({__name__": 30, "sum(increase({__name__": 0},
			data.NoticeSeverityInfo, []string{"no draft was proposed"}},
		{"no engine at all", nil, data.NoticeSeverityWarning, []string{"No vLLM engine reported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := stubExecutor(stubProm{instants: tt.instants})
			dr := run(t, e, dq("A", `{"queryType":"specDecode"}`, stubTo.Add(-time.Minute), stubTo)).Responses["A"]
			require.NoError(t, dr.Error)
			n := onlyNotice(t, dr.Frames)
			require.Equal(t, tt.severity, n.Severity)
			for _, w := range tt.want {
				require.Contains(t, n.Text, w)
			}
		})
	}
}

// TestSpecDecodeFrames: units, one display name per position, and a
// notice for groups without a draft count (V0).
func TestSpecDecodeFrames(t *testing.T) {
	t0 := stubTo.Add(-2 * time.Second)
	inst := func(i string, extra ...string) map[string]string {
		ls := map[string]string{"instance": i}
		for j := 0; j+1 < len(extra); j += 2 {
			ls[extra[j]] = extra[j+1]
		}
		return ls
	}
	p := stubProm{ranges: map[string]prom.Matrix{
		"spec_decode_num_accepted_tokens_per_pos_total": {series(t0, inst("a", "position", "0"), 0.8), series(t0, inst("a", "position", "1"), 0.5)},
		"1 + sum by":                          {series(t0, inst("a"), 2.3)},
		"spec_decode_num_draft_tokens_total[": {series(t0, inst("a"), 0.65), series(t0, inst("v0"), 0.4)},
	}}
	dr := run(t, stubExecutor(p), dq("A", `{"queryType":"specDecode"}`, stubTo.Add(-time.Minute), stubTo)).Responses["A"]
	require.NoError(t, dr.Error)
	got := byName(dr.Frames)
	require.Len(t, got, 5)
	for name, unit := range map[string]string{"a acceptance_rate": "percentunit", "v0 acceptance_rate": "percentunit", "a mean_acceptance_length": "short",
		"a acceptance_rate_pos0": "percentunit", "a acceptance_rate_pos1": "percentunit"} {
		require.Contains(t, got, name)
		require.Equal(t, unit, got[name].Fields[1].Config.Unit, name)
	}
	require.Equal(t, "1", got["a acceptance_rate_pos1"].Fields[1].Labels["position"])
	n := onlyNotice(t, dr.Frames)
	require.Equal(t, data.NoticeSeverityInfo, n.Severity)
	require.Contains(t, n.Text, "1 of the groups have no draft count")
}

func loraLabels(instance, maxLoRA, running, waiting string) map[string]string {
	return map[string]string{"instance": instance, "max_lora": maxLoRA, "running_lora_adapters": running, "waiting_lora_adapters": waiting}
}

// TestLoRATableAndNotices: the newest set per server, servers with LoRA
// off left out with an info notice, and the V1 case of no gauge at all.
func TestLoRATableAndNotices(t *testing.T) {
	t0 := stubTo.Add(-2 * time.Second)
	enginesUp := map[string]float64{"count(last_over_time(vllm:num_requests_running": 2}
	tests := []struct {
		name   string
		m      prom.Matrix
		rows   []string // instance|running|waiting|nRun|nWait|max
		notice string
	}{
		{"V0 without LoRA", prom.Matrix{series(t0, loraLabels("a", "0", "", ""), 100, 101), series(t0, loraLabels("b", "0", "", ""), 100, 101)},
			nil, "LoRA is not enabled on the selected servers"},
		{"V1 without --enable-lora", nil, nil, "--enable-lora"},
		{"one server on, one off", prom.Matrix{
			series(t0, loraLabels("a", "4", "sql", ""), 100, 101),
			series(t0, loraLabels("a", "4", "sql,chat", "code"), 99, 102),
			series(t0, loraLabels("b", "0", "", ""), 100, 101),
		}, []string{"a|sql, chat|code|2|1|4"}, "LoRA is not enabled on 1 of the selected servers (max_lora=\"0\", no adapter), left out: b."},
		{"current V1: both labels carry the adapters in flight", prom.Matrix{series(t0, loraLabels("a", "2", "sql,chat", "sql,chat"), 100, 101)},
			[]string{"a|sql, chat|sql, chat|2|2|2"}, "Running and waiting list the same adapters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := stubProm{ranges: map[string]prom.Matrix{"lora_requests_info": tt.m}, instants: enginesUp}
			dr := run(t, stubExecutor(p), dq("A", `{"queryType":"lora"}`, stubTo.Add(-time.Minute), stubTo)).Responses["A"]
			require.NoError(t, dr.Error)
			require.Len(t, dr.Frames, 1)
			f := dr.Frames[0]
			require.Equal(t, data.FrameTypeTable, f.Meta.Type)
			n, err := f.RowLen()
			require.NoError(t, err)
			require.Equal(t, len(tt.rows), n)
			for i, want := range tt.rows {
				cells := []string{}
				for _, fld := range f.Fields[:6] {
					v, _ := fld.ConcreteAt(i)
					cells = append(cells, toString(v))
				}
				require.Equal(t, want, strings.Join(cells, "|"))
			}
			notice := onlyNotice(t, dr.Frames)
			require.Equal(t, data.NoticeSeverityInfo, notice.Severity)
			require.Contains(t, notice.Text, tt.notice)
		})
	}
}

// TestLoRASeriesCounts: format series gives each server's running and
// waiting adapter counts at every step, from the newest set at that step.
func TestLoRASeriesCounts(t *testing.T) {
	t0 := stubTo.Add(-3 * time.Second)
	p := stubProm{ranges: map[string]prom.Matrix{"lora_requests_info": {
		series(t0, loraLabels("a", "4", "sql", ""), 100, 101, 101),
		series(t0.Add(time.Second), loraLabels("a", "4", "sql,chat,code", "x,y"), 102, 103),
	}}}
	dr := run(t, stubExecutor(p), dq("A", `{"queryType":"lora","format":"series"}`, stubTo.Add(-time.Minute), stubTo)).Responses["A"]
	require.NoError(t, dr.Error)
	got := byName(dr.Frames)
	require.Len(t, got, 2)
	running, wait := got["a running_adapters"], got["a waiting_adapters"]
	require.NotNil(t, running)
	require.NotNil(t, wait)
	require.Equal(t, []float64{1, 3, 3}, fieldFloats(running.Fields[1]))
	require.Equal(t, []float64{0, 2, 2}, fieldFloats(wait.Fields[1]))
	require.Equal(t, data.FrameTypeTimeSeriesMulti, running.Meta.Type)
}

func fieldFloats(f *data.Field) []float64 {
	out := make([]float64, f.Len())
	for i := range out {
		out[i] = f.At(i).(float64)
	}
	return out
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
