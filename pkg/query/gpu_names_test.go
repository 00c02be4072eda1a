package query_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// fixedProm answers every range query with the given series (one point
// each), and nothing else.
type fixedProm struct{ series []map[string]string }

func (g fixedProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

func (g fixedProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return nil, nil
}

func (g fixedProm) QueryRange(_ context.Context, _ string, r v1.Range) (prom.Matrix, []string, error) {
	var m prom.Matrix
	for _, ls := range g.series {
		m = append(m, &prom.Series{Labels: ls, Times: []time.Time{r.Start}, Values: []float64{1}})
	}
	return m, nil, nil
}

// TestGPUSeriesNamedByNodeAndGPU: GPU series read from Prometheus (the
// agents or dcgm-exporter as scraped) are named by node and GPU, whatever
// the query's grouping, so the eight GPUs of one node get eight legend
// entries rather than one name eight times.
func TestGPUSeriesNamedByNodeAndGPU(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name, query string
		series      []map[string]string
		want        []string
	}{
		{"agents as scraped", `{"queryType":"gpu","source":"prometheus","format":"series","grouping":"model"}`,
			[]map[string]string{
				{"instance": "node-a:9500", "gpu": "0", "model_name": "m", "vllm_signal": "utilization"},
				{"instance": "node-a:9500", "gpu": "1", "model_name": "m", "vllm_signal": "utilization"},
			},
			[]string{"node-a:9500/0 utilization", "node-a:9500/1 utilization"}},
		{"dcgm-exporter", `{"queryType":"gpu","source":"dcgm","format":"series","grouping":"instance"}`,
			[]map[string]string{
				{"Hostname": "node-b", "gpu": "0", "instance": "dcgm:9400", "vllm_signal": "utilization"},
				{"Hostname": "node-b", "gpu": "1", "instance": "dcgm:9400", "vllm_signal": "utilization"},
			},
			[]string{"node-b/0 utilization", "node-b/1 utilization"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
			require.NoError(t, err)
			fp := fixedProm{series: tt.series}
			e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
				Now: func() time.Time { return now }}
			r := run(t, e, dq("A", tt.query, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			var names []string
			for _, f := range r.Frames {
				for _, fl := range f.Fields {
					if fl.Config != nil && fl.Config.DisplayNameFromDS != "" {
						names = append(names, fl.Config.DisplayNameFromDS)
					}
				}
			}
			sort.Strings(names)
			require.Equal(t, tt.want, names, strings.Join(names, ", "))
		})
	}
}
