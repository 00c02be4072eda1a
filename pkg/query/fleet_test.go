package query_test

import (
	"context"
	"fmt"
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

// instantFake answers instant queries by the first key the expression
// starts with; anything else is empty.
type instantFake map[string]model.Vector

func (f instantFake) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	for prefix, v := range f {
		if strings.HasPrefix(expr, prefix) {
			return v, nil, nil
		}
	}
	return nil, nil, nil
}

func (f instantFake) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (f instantFake) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
}

func sample(inst, engine string, v float64) *model.Sample {
	return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), "engine": model.LabelValue(engine), "model_name": "m"}, Value: model.SampleValue(v)}
}

// TestFleetStates pins the state of each engine and the order: an engine
// whose last sample is older than three scrape intervals is stale, one
// whose target's scrape fails is down, one up now whose up changed at
// least twice in the range is flapping (between stale and missing
// metrics), and those lead the table. A server down now stays down
// however often it changed, and one change (a server that came up in the
// range) is no flap. The scrape columns are the last scrape's duration
// and its share of scrape_timeout_seconds, or of the assumed timeout (10s
// capped by the scrape interval, 1s here) where Prometheus has no such
// series.
func TestFleetStates(t *testing.T) {
	to := time.Unix(1_700_000_000, 0)
	fresh, old := float64(to.Add(-time.Second).Unix()), float64(to.Add(-time.Minute).Unix())
	server := func(inst string, v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst)}, Value: model.SampleValue(v)}
	}
	fake := instantFake{
		"max by (instance, engine, model_name) (last_over_time(":           {sample("a:1", "0", 1), sample("b:1", "0", 1), sample("c:1", "0", 1), sample("d:1", "0", 1), sample("e:1", "0", 1)},
		"max by (instance, engine, model_name) (timestamp(":                {sample("a:1", "0", fresh), sample("b:1", "0", old), sample("d:1", "0", fresh), sample("e:1", "0", fresh)},
		"min by (instance) (up":                                            {server("c:1", 0), server("a:1", 1), server("e:1", 1)},
		"max by (instance) (changes(up":                                    {server("c:1", 3), server("a:1", 1), server("e:1", 2)},
		"max by (instance) (scrape_duration_seconds":                       {server("a:1", 0.2), server("e:1", 0.6)},
		"max by (instance) (scrape_timeout_seconds":                        {server("a:1", 2)},
		"sum by (instance, engine, model_name) (vllm:num_requests_waiting": {sample("a:1", "0", 0), sample("d:1", "0", 50)},
		"sum by (instance, engine, model_name) (vllm:num_requests_running": {sample("a:1", "0", 4), sample("d:1", "0", 5)},
	}
	s := goldenSettings()
	e := &query.Executor{Prom: fake, Settings: s, Detector: query.NewDetector(fake, "vllm:", func() time.Time { return to })}
	resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
	r := resp.Responses["F"]
	require.NoError(t, r.Error)
	rows := fleetRows(t, r.Frames[0])
	got := make([]string, len(rows))
	for i, row := range rows {
		got[i] = fmt.Sprintf("%s %s %v %v", row["instance"], row["state"], row["scrape s"], row["scrape % of timeout"])
	}
	require.Equal(t, []string{"c:1 down <nil> <nil>", "b:1 stale <nil> <nil>", "e:1 flapping 0.6 0.6",
		"d:1 missing metrics <nil> <nil>", "a:1 missing metrics 0.2 0.1"}, got)
	require.Greater(t, rows[3]["score"].(float64), rows[4]["score"].(float64), "d queues 10 per running request")

	// worst keeps the first rows of that order (what a live fleet pushes).
	resp = e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"W": `{"queryType":"fleet","worst":2}`}))
	require.NoError(t, resp.Responses["W"].Error)
	worst := fleetRows(t, resp.Responses["W"].Frames[0])
	require.Len(t, worst, 2)
	require.Equal(t, "c:1", worst[0]["instance"])
	require.Equal(t, "b:1", worst[1]["instance"])
}

// fleetRows reads the fleet table into maps by column name; null cells are nil.
func fleetRows(t *testing.T, f *data.Frame) []map[string]any {
	t.Helper()
	out := make([]map[string]any, f.Rows())
	for i := range out {
		out[i] = map[string]any{}
		for _, fd := range f.Fields {
			v, ok := fd.ConcreteAt(i)
			if !ok {
				v = nil
			}
			out[i][fd.Name] = v
		}
	}
	return out
}

// rejectingFake is instantFake on a fleet whose names include vLLM 0.32's
// admission_rejections_total.
type rejectingFake struct{ instantFake }

func (rejectingFake) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:admission_rejections_total"}, nil
}

// TestFleetRejectedPerServer: rejections have no engine label (vLLM counts
// them in the API server), so each engine row of a server shows its
// server's rate, a server without the counter shows null, and a rejecting
// server ranks higher, its state unchanged.
func TestFleetRejectedPerServer(t *testing.T) {
	to := time.Unix(1_700_000_000, 0)
	fresh := float64(to.Add(-time.Second).Unix())
	server := func(inst string, v float64) *model.Sample {
		return &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst), "model_name": "m"}, Value: model.SampleValue(v)}
	}
	fake := rejectingFake{instantFake{
		"max by (instance, engine, model_name) (last_over_time(":              {sample("a:1", "0", 1), sample("a:1", "1", 1), sample("b:1", "0", 1)},
		"max by (instance, engine, model_name) (timestamp(":                   {sample("a:1", "0", fresh), sample("a:1", "1", fresh), sample("b:1", "0", fresh)},
		"min by (instance) (up":                                               {{Metric: model.Metric{"instance": "a:1"}, Value: 1}, {Metric: model.Metric{"instance": "b:1"}, Value: 1}},
		"sum by (instance, model_name) (rate(vllm:admission_rejections_total": {server("a:1", 2.5)},
	}}
	e := &query.Executor{Prom: fake, Settings: goldenSettings(), Detector: query.NewDetector(fake, "vllm:", func() time.Time { return to })}
	resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
	r := resp.Responses["F"]
	require.NoError(t, r.Error)
	got := map[string]any{}
	var order []string
	for _, row := range fleetRows(t, r.Frames[0]) {
		key := row["instance"].(string) + "/" + row["engine"].(string)
		got[key] = row["rejected/s"]
		order = append(order, key)
		require.Equal(t, "missing metrics", row["state"], "rejections change no state")
	}
	require.Equal(t, map[string]any{"a:1/0": 2.5, "a:1/1": 2.5, "b:1/0": nil}, got)
	require.Equal(t, "b:1/0", order[2], "the rejecting server's engines rank first")
}

// TestFleetPredatedFamilies: an engine lacking a checked family is up when
// what it exports shows its vLLM predates the family (a notice names the
// release that added it), and "missing metrics" when its generation's
// release should export it (its siblings of that release are there, or
// its generation is unknown).
func TestFleetPredatedFamilies(t *testing.T) {
	to := time.Unix(1_700_000_000, 0)
	fresh := float64(to.Add(-time.Second).Unix())
	named := func(engine, name string) *model.Sample {
		s := sample("a:1", engine, 1)
		s.Metric["__name__"] = model.LabelValue(name)
		return s
	}
	signals := map[string]string{
		"waiting":  "sum by (instance, engine, model_name) (vllm:num_requests_waiting",
		"kv":       "max by (instance, engine, model_name) (vllm:kv",
		"preempt":  "60 * sum by",
		"queue":    "histogram_quantile(0.99, sum by (le, instance, engine, model_name) (rate(vllm:request_queue",
		"ttft":     "histogram_quantile(0.99, sum by (le, instance, engine, model_name) (rate(vllm:time_to_first",
		"requests": "sum by (instance, engine, model_name) (rate(vllm:request_success_total[",
		"gen":      "sum by (instance, engine, model_name) (rate(vllm:generation_tokens_total",
	}
	tests := []struct {
		name     string
		engine   string
		exports  []string // keys of signals
		marker   string   // a generation marker name ("": none)
		evidence []string
		state    string
		missing  string
		notices  []string
	}{
		{"V0 0.4.3: predates queue time", "", []string{"waiting", "kv", "preempt", "ttft", "requests", "gen"}, "vllm:num_requests_swapped",
			[]string{"vllm:request_params_n_count"}, "up", "",
			[]string{"The \"queue time p99\" column is empty for engines whose vLLM predates vllm:request_queue_time_seconds (added in V0 0.6.4): a:1. They are up, not missing metrics."}},
		{"V0 with queue time relabelled away", "", []string{"waiting", "kv", "preempt", "ttft", "requests", "gen"}, "vllm:num_requests_swapped",
			[]string{"vllm:request_inference_time_seconds_count"}, "missing metrics", "queue_p99", nil},
		{"V1 0.7.2: predates preemptions and queue time", "", []string{"waiting", "kv", "ttft", "requests", "gen"}, "vllm:kv_cache_usage_perc",
			nil, "up", "", []string{
				"The \"engine\" column is empty for V1 servers whose vLLM predates the engine label (added in V1 0.8.3): a:1.",
				"The \"preemptions/min\" column is empty for engines whose vLLM predates vllm:num_preemptions_total (added in V1 0.8.0): a:1. They are up, not missing metrics.",
				"The \"queue time p99\" column is empty for engines whose vLLM predates vllm:request_queue_time_seconds (added in V1 0.7.3): a:1. They are up, not missing metrics."}},
		{"current V1 with preemptions disabled", "0", []string{"waiting", "kv", "queue", "ttft", "requests", "gen"}, "vllm:kv_cache_usage_perc",
			[]string{"vllm:inter_token_latency_seconds_count"}, "missing metrics", "preemptions_per_min", nil},
		{"V1 with an engine label (0.8.3 on) without queue time and no dated family: missing", "0",
			[]string{"waiting", "kv", "preempt", "ttft", "requests", "gen"}, "vllm:kv_cache_usage_perc", nil, "missing metrics", "queue_p99", nil},
		{"unknown generation", "0", []string{"waiting", "kv", "preempt", "ttft", "requests", "gen"}, "", nil, "missing metrics", "queue_p99", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := instantFake{
				"max by (instance, engine, model_name) (last_over_time(": {sample("a:1", tt.engine, 1)},
				"max by (instance, engine, model_name) (timestamp(":      {sample("a:1", tt.engine, fresh)},
				"min by (instance) (up":                                  {{Metric: model.Metric{"instance": "a:1"}, Value: 1}},
			}
			for _, k := range tt.exports {
				fake[signals[k]] = model.Vector{sample("a:1", tt.engine, 1)}
			}
			if tt.marker != "" {
				fake[`group by (instance, engine, model_name, __name__) ({__name__=~"vllm:(kv_cache_usage_perc|`] = model.Vector{named(tt.engine, tt.marker)}
			}
			var ev model.Vector
			for _, n := range tt.evidence {
				ev = append(ev, named(tt.engine, n))
			}
			fake[`group by (instance, engine, model_name, __name__) ({__name__=~"vllm:(request_inference`] = ev
			e := &query.Executor{Prom: fake, Settings: goldenSettings(), Detector: query.NewDetector(fake, "vllm:", func() time.Time { return to })}
			resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
			r := resp.Responses["F"]
			require.NoError(t, r.Error)
			rows := fleetRows(t, r.Frames[0])
			require.Len(t, rows, 1)
			require.Equal(t, tt.state, rows[0]["state"], "%v", rows[0])
			require.Equal(t, tt.missing, rows[0]["missing metrics"])
			var got []string
			for _, n := range r.Frames[0].Meta.Notices {
				if strings.Contains(n.Text, "predates") {
					got = append(got, n.Text)
				}
			}
			require.Equal(t, tt.notices, got)
		})
	}
}
