//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestGatewayErrorShareIsZeroBeforeTheFirstError: on an llm-d stack the
// workload query's gateway error share per model is the endpoint picker's
// failed requests over those it routed (model "bad": 1 of 4 a second), and
// 0 for a model whose requests the picker routed but never failed
// ("good": no error series at all), not missing, on real Prometheus 2 and 3.
func TestGatewayErrorShareIsZeroBeforeTheFirstError(t *testing.T) {
	t.Parallel()
	step := 15 * time.Second
	at := time.Now().Truncate(time.Minute).Add(-time.Minute)
	start := at.Add(-time.Hour)
	counter := func(perSecond float64) func(time.Time) float64 {
		return func(ts time.Time) float64 { return 100 + perSecond*ts.Sub(start).Seconds() }
	}
	picker := `namespace="llm",pod="epp-0",job="epp"`
	engine := func(model string) string {
		return fmt.Sprintf(`namespace="llm",pod="%s-0",model_name="%s",engine="0",job="vllm"`, model, model)
	}
	families := []omFamily{
		{name: "vllm:num_requests_running", typ: "gauge", series: []omSeries{
			{name: "vllm:num_requests_running", labels: engine("good"), value: func(time.Time) float64 { return 2 }},
			{name: "vllm:num_requests_running", labels: engine("bad"), value: func(time.Time) float64 { return 2 }},
		}},
		{name: "inference_objective_request", typ: "counter", series: []omSeries{
			{name: "inference_objective_request_total", labels: picker + `,model_name="good"`, value: counter(2)},
			{name: "inference_objective_request_total", labels: picker + `,model_name="bad"`, value: counter(4)},
		}},
		{name: "inference_objective_request_error", typ: "counter", series: []omSeries{
			{name: "inference_objective_request_error_total", labels: picker + `,model_name="bad"`, value: counter(1)},
		}},
	}
	for _, k := range promtest.Kinds()[:2] {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := backfilled(t, k, families, start, at.Add(5*time.Minute), step)
			e := settingsExecutor(t, srv.URL, `{"profile":"llm-d","scrapeInterval":"15s"}`)
			r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"workload","grouping":"model"}`),
				Interval: step, MaxDataPoints: 1000, TimeRange: backend.TimeRange{From: at.Add(-5 * time.Minute), To: at}}).Responses["A"]
			require.NoError(t, r.Error)
			frames := byName(r.Frames)
			for model, want := range map[string]float64{"bad": 0.25, "good": 0} {
				f := frames[model+" "+vllm.GatewayErrorShare]
				require.NotNil(t, f, "frames: %v", keys(frames))
				require.Equal(t, 21, f.Rows(), "%s: a share at every step", model)
				for i := 0; i < f.Rows(); i++ {
					require.InDelta(t, want, f.Fields[1].At(i).(float64), 1e-9, "%s at %v", model, f.Fields[0].At(i))
				}
			}
		})
	}
}
