package query

import (
	"context"
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
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// dcgmJoinProm answers dcgm-exporter's selector with gpus and the
// servers-by-model listing with servers; everything else is empty.
type dcgmJoinProm struct{ gpus, servers model.Vector }

func (p dcgmJoinProm) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	switch {
	case strings.Contains(expr, "DCGM_FI_DEV_"):
		return p.gpus, nil, nil
	case strings.Contains(expr, "model_name"):
		return p.servers, nil, nil
	}
	return model.Vector{}, nil, nil
}

func (dcgmJoinProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return prom.Matrix{}, nil, nil
}

func (dcgmJoinProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return nil, nil
}

// TestDCGMTableJoinsServers: on Kubernetes (servers identified by
// namespace+pod) a GPU allocated to a vLLM pod shows that server and its
// model; the exporter's own pod (an unallocated GPU under the charts'
// default honorLabels false) and a GPU without a pod show neither.
func TestDCGMTableJoinsServers(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	gpu := func(index string, extra model.Metric) *model.Sample {
		m := model.Metric{model.MetricNameLabel: "DCGM_FI_DEV_GPU_UTIL", "Hostname": "node-a", "gpu": model.LabelValue(index),
			"job": "dcgm", "instance": "node-a:9400"}
		for k, v := range extra {
			m[k] = v
		}
		return &model.Sample{Metric: m, Value: 50}
	}
	exporter := model.Metric{"namespace": "gpu-operator", "pod": "dcgm-exporter-x"}
	allocated := model.Metric{"namespace": "gpu-operator", "pod": "dcgm-exporter-x", "exported_namespace": "inference", "exported_pod": "vllm-0"}
	p := dcgmJoinProm{
		gpus:    model.Vector{gpu("0", allocated), gpu("1", exporter), gpu("2", nil)},
		servers: model.Vector{{Metric: model.Metric{"namespace": "inference", "pod": "vllm-0", "model_name": "llama"}, Value: 1}},
	}
	e := &Executor{Prom: p, Detector: NewDetector(p, "vllm:", time.Now),
		Settings: models.Settings{ScrapeInterval: time.Second, InstanceLabel: "pod", Identity: []string{"namespace", "pod"}, MetricPrefix: "vllm:"}}
	res := e.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A",
		JSON: []byte(`{"queryType":"gpu","source":"dcgm","format":"table"}`), Interval: time.Second, MaxDataPoints: 1000,
		TimeRange: backend.TimeRange{From: now.Add(-time.Hour), To: now}}}}).Responses["A"]
	require.NoError(t, res.Error)
	require.Len(t, res.Frames, 1)
	tests := []struct {
		name, gpu, instance, model string
	}{
		{"allocated to a vLLM pod", "0", "inference/vllm-0", "llama"},
		{"the exporter's own pod", "1", "", ""},
		{"no pod", "2", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := mut3Row(t, res.Frames[0], "gpu", tt.gpu)
			require.Equal(t, tt.instance, row["vllm instance"])
			require.Equal(t, tt.model, row["model"])
		})
	}
}

// mut3Row is the string columns of the row of f whose key column is key.
func mut3Row(t *testing.T, f *data.Frame, keyCol, key string) map[string]string {
	t.Helper()
	n, err := f.RowLen()
	require.NoError(t, err)
	for i := range n {
		row := map[string]string{}
		for _, fl := range f.Fields {
			if s, ok := fl.At(i).(string); ok {
				row[fl.Name] = s
			}
		}
		if row[keyCol] == key {
			return row
		}
	}
	t.Fatalf("no row with %s %q", keyCol, key)
	return nil
}

// TestGatewayNoticeRangeEdges: the picker's queue at the engine's least
// or greatest value over the window agrees with it; only a value outside
// [least, greatest] warns, whatever order the engine's samples came in.
func TestGatewayNoticeRangeEdges(t *testing.T) {
	end := time.Unix(1_800_000_000, 0)
	series := func(tag string, vs ...float64) *prom.Series {
		s := &prom.Series{Labels: map[string]string{"instance": "a", vllm.SignalTagLabel: tag}}
		for i, v := range vs {
			s.Times, s.Values = append(s.Times, end.Add(time.Duration(i-len(vs)+1)*time.Second)), append(s.Values, v)
		}
		return s
	}
	tests := []struct {
		name   string
		engine []float64
		picker float64
		want   string // "" for no notice
	}{
		{"at the engine's least", []float64{4, 9, 6}, 4, ""},
		{"at the engine's greatest", []float64{4, 9, 6}, 9, ""},
		{"between, least first", []float64{2, 10, 5}, 5, ""},
		{"between, greatest first", []float64{10, 2, 5}, 5, ""},
		{"below the least", []float64{4, 9, 6}, 3, "queue for a (3) disagrees with the engine's own (4 to 9 "},
		{"above the greatest", []float64{4, 9, 6}, 10, "queue for a (10) disagrees with the engine's own (4 to 9 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plan{settings: resolveSettings(models.Settings{ScrapeInterval: 15 * time.Second}),
				query: models.Query{Grouping: models.GroupInstance}, builder: vllm.Builder{InstanceLabel: "instance"}}
			got := p.gatewayNotices(prom.Matrix{series("waiting", tt.engine...), series(vllm.GatewayEndpointQueue, tt.picker)})
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Contains(t, got[0].Text, tt.want)
		})
	}
}

// TestRuleMixSplitStepWithoutStep: a range without a positive step has no
// step for the rules to start on, so a first evaluation inside it keeps
// the answer raw (rather than dividing by the step).
func TestRuleMixSplitStepWithoutStep(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	end := start.Add(time.Hour)
	for _, step := range []time.Duration{0, -time.Second} {
		t.Run(step.String(), func(t *testing.T) {
			got, ok := splitStep(start, end, step, start.Add(time.Minute))
			require.False(t, ok)
			require.True(t, got.IsZero())
		})
	}
}

// TestRulePresentNames: a rule plan's recorded series are present when
// every name it reads has series; a plan that names none reads nothing
// recorded, so it is not on the rules.
func TestRulePresentNames(t *testing.T) {
	u := ruleUse{rs: vllm.RuleSet{Present: map[string]bool{"a:rate1m": true, "b:rate1m": true}}}
	tests := []struct {
		name  string
		names []string
		want  bool
	}{
		{"all present", []string{"a:rate1m", "b:rate1m"}, true},
		{"one missing", []string{"a:rate1m", "c:rate1m"}, false},
		{"no names", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, u.present(vllm.RulePlan{Expr: "x", Names: tt.names}))
		})
	}
}
