package frames_test

import (
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func containerSeries(server, container, signal string, vals ...float64) *prom.Series {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	s := &prom.Series{Labels: map[string]string{"instance": server, vllm.SignalTagLabel: signal}}
	if container != "" {
		s.Labels[vllm.ContainerLabel] = container
	}
	for i, v := range vals {
		s.Times = append(s.Times, t0.Add(time.Duration(i)*15*time.Second))
		s.Values = append(s.Values, v)
	}
	return s
}

// TestContainerTableGolden: one row per server and container with each
// signal's last finite value; a container without limits has null limit
// cells shown as "no limit"; pod-level network fills its server's rows; a
// server with only pod-level series still gets a row.
func TestContainerTableGolden(t *testing.T) {
	m := prom.Matrix{
		containerSeries("b:8000", "vllm", vllm.ContainerCPUUsed, 1.5, math.NaN()),
		containerSeries("b:8000", "vllm", vllm.ContainerMemoryUsed, 2e10),
		containerSeries("a:8000", "vllm", vllm.ContainerCPUUsed, 1.9, 2),
		containerSeries("a:8000", "vllm", vllm.ContainerCPULimit, 2, 2),
		containerSeries("a:8000", "vllm", vllm.ContainerCPUOfLimit, 0.95, 1),
		containerSeries("a:8000", "vllm", vllm.ContainerCPUThrottled, 0.2, 0.3),
		containerSeries("a:8000", "vllm", vllm.ContainerMemoryUsed, 2.8e10),
		containerSeries("a:8000", "vllm", vllm.ContainerMemoryLimit, 3.2e10),
		containerSeries("a:8000", "vllm", vllm.ContainerMemoryOfLimit, 0.875),
		containerSeries("a:8000", "", vllm.ContainerNetReceive, 1e6),
		containerSeries("c:8000", "", vllm.ContainerNetReceive, 5e5),
		containerSeries("b:8000", "vllm", vllm.ContainerOOMEvents, math.NaN()),
	}
	f := frames.ContainerTable(m, func(ls map[string]string) string { return ls["instance"] }, "Expr: x\nStep: 15s",
		[]data.Notice{{Severity: data.NoticeSeverityInfo, Text: "CPU: no limit"}})
	require.Equal(t, 3, f.Rows())
	cpuLimit, _ := f.FieldByName("CPU limit")
	require.Equal(t, frames.NoLimit, cpuLimit.Config.NoValue)
	require.Nil(t, cpuLimit.At(1), "b has no CPU limit")
	used, _ := f.FieldByName("CPU used")
	require.Equal(t, 1.5, *used.At(1).(*float64), "the last finite value, not the NaN after it")
	oom, _ := f.FieldByName("OOM events")
	require.Nil(t, oom.At(1), "a series of NaN only is a null cell")
	experimental.CheckGoldenJSONFrame(t, "testdata", "container-table", f, updateGolden())
}

// TestFleetContainerColumns: the fleet table gains "CPU throttled %" and
// "memory % of limit" only when some row has a value (a fleet without
// cAdvisor keeps its columns); a server without a memory limit shows
// "no limit".
func TestFleetContainerColumns(t *testing.T) {
	thr, mem := 0.4, 0.5
	tests := []struct {
		name   string
		rows   []frames.FleetRow
		fields int
	}{
		{"no cAdvisor", []frames.FleetRow{{Instance: "a"}, {Instance: "b"}}, 0},
		{"throttling only", []frames.FleetRow{{Instance: "a", CPUThrottled: &thr}, {Instance: "b"}}, 2},
		{"memory only", []frames.FleetRow{{Instance: "a"}, {Instance: "b", MemoryOfLimit: &mem}}, 2},
	}
	base := frames.FleetTable([]frames.FleetRow{{Instance: "a"}}, "", nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := frames.FleetTable(tt.rows, "", nil)
			require.Len(t, f.Fields, len(base.Fields)+tt.fields)
			if tt.fields == 0 {
				return
			}
			th, _ := f.FieldByName("CPU throttled %")
			m, _ := f.FieldByName("memory % of limit")
			require.Equal(t, "percentunit", th.Config.Unit)
			require.Equal(t, frames.NoLimit, m.Config.NoValue)
			require.Equal(t, tt.rows[0].CPUThrottled, th.At(0))
			require.Equal(t, tt.rows[1].MemoryOfLimit, m.At(1))
		})
	}
}
