package query_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestNoEngineNotices: a fleet table and a ranking over a Prometheus with
// no engine say so, rather than showing an empty answer without a word.
func TestNoEngineNotices(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, q := range []string{`{"queryType":"fleet"}`, `{"queryType":"topk","format":"table"}`} {
		t.Run(q, func(t *testing.T) {
			r := run(t, scriptedExecutor(&scripted{}), dq("A", q, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			require.Contains(t, noticeTexts(r.Frames), vllm.NoEngineText(""))
		})
	}
}

// TestTopKEnginesSeriesWithoutSamples: an "engines" series with no sample
// (a matrix may hold one) counts no engine rather than failing the query.
func TestTopKEnginesSeriesWithoutSamples(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := &scripted{
		instant: func(string, time.Time) model.Vector { return rankingAnswer(map[string]float64{"a": 3}) },
		matrix: func(string, v1.Range) model.Matrix {
			return model.Matrix{
				{Metric: model.Metric{"instance": "a", vllm.SignalTagLabel: "value"}, Values: []model.SamplePair{{Timestamp: model.TimeFromUnix(now.Unix()), Value: 3}}},
				{Metric: model.Metric{"instance": "a", vllm.SignalTagLabel: "engines", "model_name": "m"}},
			}
		},
	}
	r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	table, got := rankTable(t, r.Frames)
	require.Equal(t, []string{"a"}, got)
	require.Equal(t, int64(0), table.Fields[fieldIndex(table, "engines")].At(0))
}

// servingAgents report one GPU per vLLM instance of instances.
type servingAgents struct{ instances []string }

func (a servingAgents) Fetch(_ context.Context, urls []string) agentapi.Result {
	res := agentapi.Result{Time: time.Now()}
	var gpus []agentapi.GPU
	for i, in := range a.instances {
		gpus = append(gpus, agentapi.GPU{Index: i, UUID: "GPU-" + in, VLLMInstance: in})
	}
	for _, u := range urls {
		res.Reports = append(res.Reports, agentapi.AgentReport{URL: u, Report: agentapi.Report{Node: "n1", GPUs: gpus}})
	}
	return res
}

// TestGPUTableFromAgents: the agents' GPU table lists every GPU, or those
// of the selected instances.
func TestGPUTableFromAgents(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name, query string
		want        []string
	}{
		{"all", `{"queryType":"gpu","format":"table"}`, []string{"GPU-a", "GPU-b"}},
		{"one instance", `{"queryType":"gpu","format":"table","instances":["b"]}`, []string{"GPU-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := scriptedExecutor(&scripted{})
			e.Agents = servingAgents{instances: []string{"a", "b"}}
			e.Settings.Agents = models.AgentSettings{URLs: []string{"http://n1:9400"}, Timeout: time.Second}
			r := run(t, e, dq("A", tt.query, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			require.Len(t, r.Frames, 1)
			require.Equal(t, tt.want, mut1Column(r.Frames[0], "uuid"))
		})
	}
}

// TestDCGMTable: dcgm-exporter's GPUs make the table's rows, without the
// notice that says none were found.
func TestDCGMTable(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := &scripted{instant: func(expr string, _ time.Time) model.Vector {
		if strings.Contains(expr, "DCGM_FI_DEV_GPU_UTIL") {
			return model.Vector{
				{Metric: model.Metric{model.MetricNameLabel: "DCGM_FI_DEV_GPU_UTIL", "Hostname": "node-a", "gpu": "0"}, Value: 40},
				{Metric: model.Metric{model.MetricNameLabel: "DCGM_FI_DEV_GPU_UTIL", "Hostname": "node-a", "gpu": "1"}, Value: 60},
			}
		}
		return model.Vector{}
	}}
	r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"gpu","source":"dcgm","format":"table"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	require.Len(t, r.Frames, 1)
	rows, err := r.Frames[0].RowLen()
	require.NoError(t, err)
	require.Equal(t, 2, rows)
	require.NotContains(t, noticeTexts(r.Frames), "No dcgm-exporter series")
}

// mut1Column is a string column's values, sorted.
func mut1Column(f *data.Frame, name string) []string {
	var out []string
	for _, fl := range f.Fields {
		if fl.Name != name {
			continue
		}
		for i := range fl.Len() {
			switch v := fl.At(i).(type) {
			case string:
				out = append(out, v)
			case *string:
				if v != nil {
					out = append(out, *v)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
