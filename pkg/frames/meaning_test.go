package frames

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestAnnotations states what an on-call engineer reads on a preemption
// region: who, how many, how full the KV cache was, and the tags to filter by.
func TestAnnotations(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	events := []vllm.Event{
		{Start: t0, End: t0.Add(30 * time.Second), From: t0.Add(-75 * time.Second), Count: 3, KVUsage: 0.914, Instance: "a:8000", Engine: "1", Model: "m"},
		{Start: t0, End: t0, From: t0.Add(-70 * time.Second), Count: 1, KVUsage: math.NaN(), Instance: "b:8000", Model: "q"},
	}
	f := Annotations(events, "pod", "Expr: x", []data.Notice{{Text: "n"}})
	// the region starts at From: vLLM counts a preemption late
	const late = "vLLM counts a preemption when the preempted request next produces output, so the region and its KV peak reach back 1m before the sample preceding the count."
	require.Equal(t, "Expr: x", f.Meta.ExecutedQueryString)
	require.Equal(t, []data.Notice{{Text: "n"}}, f.Meta.Notices, "the notices are on the frame as built")
	require.Equal(t, 2, f.Rows())
	tests := []struct {
		row               int
		title, text, tags string
		start, end        time.Time
	}{
		{row: 0, title: "Preemptions on a:8000 engine 1", text: "3 preemptions (KV cache peaked at 91% used) on model m, counted from 12:00:00. " + late,
			tags: `["model:m","pod:a:8000","engine:1","preemption"]`, start: t0.Add(-75 * time.Second), end: t0.Add(30 * time.Second)},
		{row: 1, title: "Preemptions on b:8000 engine 0", text: "1 preemption (KV-cache usage unknown) on model q, counted from 12:00:00. " + late,
			tags: `["model:q","pod:b:8000","engine:0","preemption"]`, start: t0.Add(-70 * time.Second), end: t0},
	}
	for _, tt := range tests {
		require.Equal(t, tt.start, f.Fields[0].At(tt.row))
		require.Equal(t, tt.end, f.Fields[1].At(tt.row))
		require.Equal(t, tt.title, f.Fields[2].At(tt.row))
		require.Equal(t, tt.text, f.Fields[3].At(tt.row))
		require.JSONEq(t, tt.tags, string(f.Fields[4].At(tt.row).(json.RawMessage)))
	}
}

// TestGPUByInstance: an instance's GPUs add up their memory, and its
// utilisation is the mean over the GPUs that reported one.
func TestGPUByInstance(t *testing.T) {
	reports := []agentapi.AgentReport{
		{Report: agentapi.Report{Node: "n2", GPUs: []agentapi.GPU{
			{Index: 0, VLLMInstance: "a", MemoryUsedBytes: agentapi.Float(10), MemoryTotalBytes: agentapi.Float(80), GPUUtilPercent: agentapi.Float(90)},
			{Index: 1, VLLMInstance: "a", MemoryUsedBytes: agentapi.Float(30), MemoryTotalBytes: agentapi.Float(80), GPUUtilPercent: agentapi.Float(30)},
			{Index: 2, VLLMInstance: "a", MemoryUsedBytes: agentapi.Float(5)},
			{Index: 3, MemoryUsedBytes: agentapi.Float(1)},
		}}},
		{Report: agentapi.Report{Node: "n1", GPUs: []agentapi.GPU{
			{Index: 0, VLLMInstance: "b", GPUUtilPercent: agentapi.Float(12)},
		}}},
	}
	got := GPUByInstance(reports)
	require.Equal(t, map[string]GPUSummary{
		"a": {GPUs: 3, MemoryUsedBytes: 45, MemoryTotalBytes: 160, UtilPercent: 60},
		"b": {GPUs: 1, UtilPercent: 12},
	}, got)
}

// TestTimeSeriesOrderAndEmpty: frames come sorted by name and labels
// whatever order Prometheus used, and an empty result is one frame that
// still carries the executed query and the notices.
func TestTimeSeriesOrderAndEmpty(t *testing.T) {
	notices := []data.Notice{{Severity: data.NoticeSeverityInfo, Text: "n"}}
	empty := TimeSeries(nil, SeriesOptions{Executed: "Expr: e", Notices: notices})
	require.Len(t, empty, 1)
	require.Equal(t, 0, empty[0].Rows())
	require.Equal(t, "Expr: e", empty[0].Meta.ExecutedQueryString)
	require.Equal(t, notices, empty[0].Meta.Notices)

	ts := time.UnixMilli(1_700_000_000_000)
	stream := func(inst string) *prom.Series {
		return &prom.Series{Labels: map[string]string{"instance": inst}, Times: []time.Time{ts}, Values: []float64{1}}
	}
	fs := TimeSeries(prom.Matrix{stream("c"), stream("a"), stream("b")}, SeriesOptions{GroupLabels: []string{"instance"}, Executed: "Expr: e"})
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
		require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
	}
	require.Equal(t, []string{"a", "b", "c"}, names)
	require.Equal(t, "Expr: e", fs[0].Meta.ExecutedQueryString, "the first frame carries the query")
}

// TestRankTable: the engine column only when ranking engines; the GPU
// columns only when some row has GPU data, null for rows without.
func TestRankTable(t *testing.T) {
	rows := []RankRow{
		{Rank: 1, Instance: "a", Engine: "0", Model: "m", Engines: 2, Value: 9, GPU: &GPUSummary{GPUs: 2, MemoryUsedBytes: 1, MemoryTotalBytes: 2, UtilPercent: 50}},
		{Rank: 2, Instance: "b", Engine: "1", Model: "m", Engines: 1, Value: 3},
	}
	names := func(f *data.Frame) []string {
		var out []string
		for _, fld := range f.Fields {
			out = append(out, fld.Name)
		}
		return out
	}
	f := RankTable(rows, RankOptions{WithEngine: true, ValueName: "waiting", Unit: "short", Executed: "Expr: r", Notices: []data.Notice{{Text: "n"}}})
	require.Equal(t, []string{"rank", "instance", "engine", "model", "engines", "waiting", "gpus", "gpu memory used", "gpu memory total", "gpu utilization"}, names(f))
	require.Equal(t, data.FrameTypeTable, f.Meta.Type)
	require.Equal(t, "Expr: r", f.Meta.ExecutedQueryString)
	require.Equal(t, []data.Notice{{Text: "n"}}, f.Meta.Notices)
	require.Equal(t, "short", f.Fields[5].Config.Unit)
	require.Equal(t, 9.0, f.Fields[5].At(0))
	require.Equal(t, int64(2), *(f.Fields[6].At(0).(*int64)))
	require.Nil(t, f.Fields[6].At(1), "no GPU data for b")
	require.Equal(t, "bytes", f.Fields[7].Config.Unit)
	require.Equal(t, "percent", f.Fields[9].Config.Unit)

	rows[0].GPU = nil
	f = RankTable(rows, RankOptions{ValueName: "kv_usage", Unit: "percentunit"})
	require.Equal(t, []string{"rank", "instance", "model", "engines", "kv_usage"}, names(f))
}

// TestTimeSeriesSameNameOrderedByLabels: series that share a display name
// (a legend that leaves out what tells them apart) are ordered by their
// labels, so panels keep their colours from one refresh to the next.
func TestTimeSeriesSameNameOrderedByLabels(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_000)
	stream := func(inst string) *prom.Series {
		return &prom.Series{Labels: map[string]string{"instance": inst, "model_name": "m"},
			Times: []time.Time{ts}, Values: []float64{1}}
	}
	fs := TimeSeries(prom.Matrix{stream("c"), stream("a"), stream("b")},
		SeriesOptions{Legend: "{{model_name}}", GroupLabels: []string{"instance"}})
	var order []string
	for _, f := range fs {
		require.Equal(t, "m", f.Name)
		order = append(order, f.Fields[1].Labels["instance"])
	}
	require.Equal(t, []string{"a", "b", "c"}, order)
}
