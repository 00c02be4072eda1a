package frames

import (
	"math"
	"sort"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// UnitCores is Grafana's custom unit for CPU cores (a suffix).
const UnitCores = "suffix: cores"

// NoLimit is what a limit cell shows when the container has none.
const NoLimit = "no limit"

// containerColumns are the container table's value columns, in order:
// the signal each reads, its title and unit. Limits show "no limit" where
// the container has none (null: Grafana prints the field's NoValue).
var containerColumns = []struct{ signal, title, unit string }{
	{vllm.ContainerCPUUsed, "CPU used", UnitCores},
	{vllm.ContainerCPULimit, "CPU limit", UnitCores},
	{vllm.ContainerCPUOfLimit, "CPU % of limit", "percentunit"},
	{vllm.ContainerCPUThrottled, "CPU throttled %", "percentunit"},
	{vllm.ContainerMemoryUsed, "memory working set", "bytes"},
	{vllm.ContainerMemoryLimit, "memory limit", "bytes"},
	{vllm.ContainerMemoryOfLimit, "memory % of limit", "percentunit"},
	{vllm.ContainerOOMEvents, "OOM events", "short"},
	{vllm.ContainerRestarts, "restarts", "short"},
	{vllm.ContainerNetReceive, "network in", "Bps"},
	{vllm.ContainerNetTransmit, "network out", "Bps"},
	{vllm.ContainerFSRead, "disk read", "Bps"},
	{vllm.ContainerFSWrite, "disk write", "Bps"},
}

type containerRow struct {
	server, container string
	values            map[string]float64
}

// ContainerTable is the container query's table: one row per server and
// container with each signal's last value in the range. Pod-level series
// (Kubernetes network, which has no container) fill every row of their
// server. serverOf names a series' server (vllm.Builder.InstanceOf).
func ContainerTable(m prom.Matrix, serverOf func(map[string]string) string, executed string, notices []data.Notice) *data.Frame {
	rows := containerRows(m, serverOf)
	n := len(rows)
	servers, containers := make([]string, n), make([]string, n)
	for i, r := range rows {
		servers[i], containers[i] = r.server, r.container
	}
	fields := []*data.Field{data.NewField("instance", nil, servers), data.NewField("container", nil, containers)}
	for _, c := range containerColumns {
		vals := make([]*float64, n)
		for i, r := range rows {
			if v, ok := r.values[c.signal]; ok {
				vals[i] = &v
			}
		}
		f := data.NewField(c.title, nil, vals)
		f.Config = &data.FieldConfig{Unit: c.unit}
		if c.signal == vllm.ContainerCPULimit || c.signal == vllm.ContainerMemoryLimit ||
			c.signal == vllm.ContainerCPUOfLimit || c.signal == vllm.ContainerMemoryOfLimit {
			f.Config.NoValue = NoLimit
		}
		fields = append(fields, f)
	}
	f := data.NewFrame("container", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed, Notices: notices})
	return f
}

// containerRows groups the last finite value of each series by server and
// container, sorted by server then container.
func containerRows(m prom.Matrix, serverOf func(map[string]string) string) []*containerRow {
	byKey := map[[2]string]*containerRow{}
	var podLevel []*prom.Series
	for _, s := range m {
		c := s.Labels[vllm.ContainerLabel]
		if c == "" {
			podLevel = append(podLevel, s)
			continue
		}
		setLast(rowFor(byKey, serverOf(s.Labels), c), s)
	}
	for _, s := range podLevel {
		server, filled := serverOf(s.Labels), false
		for k, r := range byKey {
			if k[0] == server {
				setLast(r, s)
				filled = true
			}
		}
		if !filled {
			setLast(rowFor(byKey, server, ""), s)
		}
	}
	rows := make([]*containerRow, 0, len(byKey))
	for _, r := range byKey {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].server != rows[j].server {
			return rows[i].server < rows[j].server
		}
		return rows[i].container < rows[j].container
	})
	return rows
}

func rowFor(byKey map[[2]string]*containerRow, server, container string) *containerRow {
	k := [2]string{server, container}
	if byKey[k] == nil {
		byKey[k] = &containerRow{server: server, container: container, values: map[string]float64{}}
	}
	return byKey[k]
}

// setLast puts the series' last finite value in the row's cell of its
// signal; a series with none leaves the cell null.
func setLast(r *containerRow, s *prom.Series) {
	if v := lastFinite(s); !math.IsNaN(v) {
		r.values[s.Labels[vllm.SignalTagLabel]] = v
	}
}

// lastFinite is the series' last value that is a number (NaN if none).
func lastFinite(s *prom.Series) float64 {
	for i := len(s.Values) - 1; i >= 0; i-- {
		if v := s.Values[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v
		}
	}
	return math.NaN()
}

// fleetContainerFields are the fleet table's container columns, "CPU
// throttled %" and "memory % of limit", only where some engine's server
// has a value: a fleet without cAdvisor keeps the table it had.
func fleetContainerFields(rows []FleetRow) []*data.Field {
	throttled, mem := make([]*float64, len(rows)), make([]*float64, len(rows))
	any := false
	for i, r := range rows {
		throttled[i], mem[i] = r.CPUThrottled, r.MemoryOfLimit
		any = any || r.CPUThrottled != nil || r.MemoryOfLimit != nil
	}
	if !any {
		return nil
	}
	t := data.NewField("CPU throttled %", nil, throttled)
	t.Config = &data.FieldConfig{Unit: "percentunit"}
	m := data.NewField("memory % of limit", nil, mem)
	m.Config = &data.FieldConfig{Unit: "percentunit", NoValue: NoLimit}
	return []*data.Field{t, m}
}
