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
