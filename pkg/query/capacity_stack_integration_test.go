//go:build !mutation

package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// wvaExposition is what llm-d's workload variant autoscaler's controller
// exports (its internal/metrics: two gauges labelled variant_name,
// namespace and accelerator_type), from a client_golang registry as the
// controller's is: per variant, desired and current replicas.
func wvaExposition(t *testing.T, variants [][2]string, desired, current []float64) func(*bytes.Buffer) {
	reg := prometheus.NewRegistry()
	labels := []string{"variant_name", "namespace", "accelerator_type"}
	d := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "wva_desired_replicas", Help: "Desired number of replicas for each variant"}, labels)
	c := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "wva_current_replicas", Help: "Current number of replicas for each variant"}, labels)
	reg.MustRegister(d, c)
	for i, v := range variants {
		d.WithLabelValues(v[1], v[0], "H100").Set(desired[i])
		c.WithLabelValues(v[1], v[0], "H100").Set(current[i])
	}
	return func(buf *bytes.Buffer) {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		enc := expfmt.NewEncoder(buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			require.NoError(t, enc.Encode(mf))
		}
	}
}

// TestCapacityShowsTheStacksAutoscaler: on an llm-d fleet (pods of two
// Deployments, scraped by a PodMonitor) whose WVA controller is scraped
// from its own namespace, the capacity table shows each model's replicas
// as the WVA sees and wants them, matched by the Deployment's name
// prefixing its pods' names; a variant with no pod here is named in a
// notice; the series format carries the WVA's count for alert rules.
func TestCapacityShowsTheStacksAutoscaler(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate, cfg.Engine = 3, 0, 2, capacityEngine()
	cfg.Instances = []sim.InstanceConfig{{Model: "llama"}, {Model: "llama"}, {Model: "llama"}, {Model: "qwen"}}
	// Two Deployments serve llama, one of them named with the other's name
	// as a prefix; a qwen variant of the same name lives in another
	// namespace; a mistral variant has no pod here.
	pods := []string{"vllm-llama-7c9f8d5b4-x2k9p", "vllm-llama-7c9f8d5b4-q8w2m", "vllm-llama-fast-5f6b7c8d9-r4t5y", "vllm-qwen-66d4c8f7b9-lz5tn"}
	variants := [][2]string{{"inference", "vllm-llama"}, {"inference", "vllm-llama-fast"}, {"inference", "vllm-qwen"},
		{"ai", "vllm-qwen"}, {"inference", "vllm-mistral"}}
	tg := simTargets{
		Labels: func(i int) string {
			return fmt.Sprintf(`instance="10.0.0.%d:8000",job="inference/vllm",namespace="inference",pod=%q`, i+1, pods[i])
		},
		Others: []otherTarget{{
			Labels: `instance="10.1.0.9:8443",job="llm-d-system/wva-controller",namespace="llm-d-system",pod="wva-controller-5d8b9-abcde"`,
			Write:  wvaExposition(t, variants, []float64{4, 1, 2, 7, 3}, []float64{2, 1, 1, 7, 3}),
		}},
	}
	h := runSimHistoryWith(t, promtest.Prometheus2, cfg, 40*time.Minute, 15*time.Second, capacityKeepsAndWVA, tg)
	e := settingsExecutor(t, h.Prom.URL, `{"scrapeInterval":"15s","instanceLabel":"pod"}`)
	ask := func(format string) backend.DataResponse {
		return run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"capacity","format":"` + format + `"}`),
			Interval: time.Minute, MaxDataPoints: 30, TimeRange: backend.TimeRange{From: h.End.Add(-30 * time.Minute), To: h.End}}).Responses["A"]
	}
	r := ask("table")
	require.NoError(t, r.Error)
	// llama: vllm-llama (4 wanted, 2 seen) and vllm-llama-fast (1, 1).
	want := map[string][2]float64{"llama": {5, 3}, "qwen": {2, 1}}
	for i := 0; i < r.Frames[0].Rows(); i++ {
		row := tableRow(t, r.Frames[0], i)
		w := want[row["model"].(string)]
		require.Equal(t, w[0], row["autoscaler desired (llm-d)"], "%s: the WVA's desired replicas", row["model"])
		require.Equal(t, w[1], row["autoscaler current (llm-d)"], "%s: the WVA's current replicas", row["model"])
	}
	require.Equal(t, 2, r.Frames[0].Rows())
	texts := noticeTexts(r.Frames)
	require.Contains(t, texts, "llm-d's autoscaler sizes ai/vllm-qwen, inference/vllm-mistral, whose pods serve none")
	require.Contains(t, executed(r.Frames), "wva_desired_replicas")

	s := ask("series")
	require.NoError(t, s.Error)
	counts := map[string]float64{}
	for _, f := range s.Frames {
		if len(f.Fields) == 2 && f.Fields[1].Labels["signal"] == "autoscaler_desired_replicas" {
			v, _ := f.Fields[1].ConcreteAt(f.Fields[1].Len() - 1)
			counts[f.Fields[1].Labels["model_name"]] = v.(float64)
		}
	}
	require.Equal(t, map[string]float64{"llama": 5, "qwen": 2}, counts)
}

// capacityKeepsAndWVA keeps the capacity query's samples and the WVA's.
func capacityKeepsAndWVA(name string) bool {
	return capacityKeeps(name) || name == "wva_desired_replicas" || name == "wva_current_replicas"
}
