package frames

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func dcgmRows() []DCGMRow {
	return []DCGMRow{
		{GPU: vllm.DCGMGPU{Node: "n1", Index: "0", UUID: "GPU-0", Name: "H100", Namespace: "llm", Pod: "vllm-0",
			Values: map[string]float64{vllm.DCGMUtil: 80, vllm.DCGMFBUsed: 70, vllm.DCGMFBTotal: 100, vllm.DCGMSMClock: 1.98e9, vllm.DCGMXID: 0}},
			Instance: "llm/vllm-0", Model: "m"},
		{GPU: vllm.DCGMGPU{Node: "n1", Index: "1", UUID: "GPU-1", Name: "H100", Namespace: "llm", Pod: "vllm-0",
			Values: map[string]float64{vllm.DCGMUtil: 60, vllm.DCGMFBUsed: 50, vllm.DCGMFBTotal: 100}},
			Instance: "llm/vllm-0", Model: "m"},
		{GPU: vllm.DCGMGPU{Node: "n1", Index: "2", UUID: "GPU-2", Values: map[string]float64{vllm.DCGMFBUsed: 0, vllm.DCGMFBTotal: 100}}},
		{GPU: vllm.DCGMGPU{Node: "n2", Index: "0", UUID: "GPU-3", Values: map[string]float64{vllm.DCGMFBUsed: 9, vllm.DCGMFBTotal: 10}},
			Instance: "llm/vllm-1", Model: "m"},
	}
}

// Every reading is a column in Grafana's unit, null where dcgm-exporter
// has none (not zero: a zero last XID means "none seen").
func TestDCGMTable(t *testing.T) {
	f := DCGMTable(dcgmRows(), "Expr: x", nil)
	require.Equal(t, 4, f.Rows())
	want := []string{"node", "gpu", "uuid", "name", "gpu utilization", "memory used", "memory free", "memory reserved", "memory total",
		"power", "temperature", "sm clock", "tensor active", "graphics active", "last xid", "namespace", "pod", "vllm instance", "model"}
	var got []string
	units := map[string]string{}
	for _, fd := range f.Fields {
		got = append(got, fd.Name)
		if fd.Config != nil {
			units[fd.Name] = fd.Config.Unit
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, map[string]string{"gpu utilization": "percent", "memory used": "bytes", "memory free": "bytes", "memory reserved": "bytes",
		"memory total": "bytes", "power": "watt", "temperature": "celsius", "sm clock": "hertz", "tensor active": "percentunit",
		"graphics active": "percentunit", "last xid": "none"}, units)
	col := func(name string) int {
		_, i := f.FieldByName(name)
		return i
	}
	require.Equal(t, 1.98e9, *f.Fields[col("sm clock")].At(0).(*float64))
	require.Equal(t, 0.0, *f.Fields[col("last xid")].At(0).(*float64), "a zero reading is a value")
	require.Nil(t, f.Fields[col("last xid")].At(1), "a missing reading is null")
	require.Nil(t, f.Fields[col("power")].At(0))
	require.Equal(t, "llm/vllm-0", f.Fields[col("vllm instance")].At(1))
	require.Equal(t, "", f.Fields[col("vllm instance")].At(2), "unallocated")
	require.Equal(t, "vllm-0", f.Fields[col("pod")].At(0))
	require.Equal(t, "llm", f.Fields[col("namespace")].At(1))
	require.Equal(t, "m", f.Fields[col("model")].At(3))
	require.Equal(t, "n2", f.Fields[col("node")].At(3))
	require.Equal(t, "1", f.Fields[col("gpu")].At(1))
	require.Equal(t, "GPU-2", f.Fields[col("uuid")].At(2))
	require.Equal(t, "H100", f.Fields[col("name")].At(0))
	require.Equal(t, "Expr: x", f.Meta.ExecutedQueryString)
}

// A server's GPUs add up: count, memory used and total, mean utilisation
// over the GPUs that report one; unallocated GPUs belong to no one.
func TestDCGMByInstance(t *testing.T) {
	got := DCGMByInstance(dcgmRows())
	require.Equal(t, map[string]GPUSummary{
		"llm/vllm-0": {GPUs: 2, MemoryUsedBytes: 120, MemoryTotalBytes: 200, UtilPercent: 70},
		"llm/vllm-1": {GPUs: 1, MemoryUsedBytes: 9, MemoryTotalBytes: 10, UtilPercent: 0},
	}, got)
}
