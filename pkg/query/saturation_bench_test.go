package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// satFleetProm answers the saturation query's range expressions for a fleet
// of n instances with values of its own (each instance's verdict depends
// on its index), in process: what the plugin does between Prometheus'
// answer and the frames, without HTTP or JSON (pkg/prom's benchmarks
// have the decoding).
type satFleetProm struct{ n int }

func (p satFleetProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:num_preemptions_total", "vllm:request_success_total", "vllm:generation_tokens_total"}, nil
}

func (p satFleetProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

// QueryRange gives each instance one series valued by the signal the
// expression asks for; the stall and prefix-cache expressions are empty.
func (p satFleetProm) QueryRange(_ context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	value := fleetSignal(expr)
	if value == nil {
		return nil, nil, nil
	}
	var times []time.Time
	for t := r.Start; !t.After(r.End); t = t.Add(r.Step) {
		times = append(times, t)
	}
	m := make(prom.Matrix, p.n)
	for i := range m {
		s := &prom.Series{Labels: map[string]string{"instance": fmt.Sprintf("10.%d.%d.%d:8000", i>>16, (i>>8)&255, i&255)},
			Times: times, Values: make([]float64, len(times))}
		for j := range times {
			s.Values[j] = value(i, j)
		}
		m[i] = s
	}
	return m, nil, nil
}

// fleetSignal is the value of the signal expr asks for, by instance and
// step: a mix of idle, ok, queueing and KV-bound instances.
func fleetSignal(expr string) func(i, j int) float64 {
	switch {
	case strings.Contains(expr, "unless"), strings.Contains(expr, "prefix_cache"):
		return nil
	case strings.Contains(expr, "avg_over_time(vllm:num_requests_waiting"):
		return func(i, j int) float64 { return float64((i % 7) * (j % 3)) }
	case strings.Contains(expr, "avg_over_time(vllm:num_requests_running"):
		return func(i, j int) float64 { return float64(i%50 + j) }
	case strings.Contains(expr, "max_over_time(vllm:num_requests_running"):
		return func(i, j int) float64 { return float64(i%50 + 20) }
	case strings.Contains(expr, "kv_cache_usage_perc"):
		return func(i, _ int) float64 { return 0.5 + float64(i%10)/20 }
	case strings.Contains(expr, "num_preemptions"):
		return func(i, j int) float64 { return float64(i % 13 % 3 * j % 2) }
	case strings.Contains(expr, "delta("):
		return func(_, j int) float64 { return float64(j%3) - 1 }
	case strings.Contains(expr, "request_success"):
		return func(i, _ int) float64 { return float64(i%5) + 1 }
	}
	return nil
}

// BenchmarkSaturationFleet answers a saturation query per instance (5
// minutes at 30 s, 11 steps, format both) on fleets of 500 and 5,000
// instances (the fleet bench's 1,000 and 10,000 engines) and encodes the
// answer as the SDK sends it over gRPC; "decode" is Grafana's side of it.
func BenchmarkSaturationFleet(b *testing.B) {
	for _, n := range []int{500, 5000} {
		now := time.Unix(1_800_000_000, 0)
		s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{"scrapeInterval":"15s","recordingRules":false}`)})
		require.NoError(b, err)
		fp := satFleetProm{n: n}
		e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
			Now: func() time.Time { return now }}
		q := backend.DataQuery{RefID: "A", JSON: []byte(`{"queryType":"saturation"}`), Interval: 30 * time.Second, MaxDataPoints: 10,
			TimeRange: backend.TimeRange{From: now.Add(-5 * time.Minute), To: now}}
		answer := func() data.Frames {
			dr := e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}}).Responses["A"]
			require.NoError(b, dr.Error)
			return dr.Frames
		}
		frames := answer()
		b.Run(fmt.Sprintf("instances=%d/answer+encode", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				_, err := answer().MarshalArrow()
				require.NoError(b, err)
			}
			b.ReportMetric(float64(len(frames)), "frames")
		})
		encoded, err := frames.MarshalArrow()
		require.NoError(b, err)
		b.Run(fmt.Sprintf("instances=%d/decode", n), func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for _, x := range encoded {
				size += len(x)
			}
			for range b.N {
				_, err := data.UnmarshalArrowFrames(encoded)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}

// saturationOn answers a saturation query per instance (5 minutes at
// 30 s) on a fleet of n instances, with the executor's cut-over to wide
// frames at wideAbove (0: the default).
func saturationOn(t testing.TB, n, wideAbove int, format string) backend.DataResponse {
	now := time.Unix(1_800_000_000, 0)
	s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{"scrapeInterval":"15s","recordingRules":false}`)})
	require.NoError(t, err)
	fp := satFleetProm{n: n}
	e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
		Now: func() time.Time { return now }, WideAbove: wideAbove}
	q := backend.DataQuery{RefID: "A", JSON: []byte(`{"queryType":"saturation","format":"` + format + `"}`), Interval: 30 * time.Second,
		MaxDataPoints: 10, TimeRange: backend.TimeRange{From: now.Add(-5 * time.Minute), To: now}}
	dr := e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{q}}).Responses["A"]
	require.NoError(t, dr.Error)
	return dr
}
