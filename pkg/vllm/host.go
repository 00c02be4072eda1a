package vllm

import (
	"fmt"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// HostLabel is the label the host query joins on: the host part of the
// vLLM instance label and of the node exporter's instance label
// ("10.0.3.7:8000" and "10.0.3.7:9100" are both host "10.0.3.7").
const HostLabel = "host"

// hostRegex takes the host out of host:port (or keeps a label without a
// port whole); label_replace anchors it.
const hostRegex = "(.*?)(?::[0-9]+)?"

// NodeProbe counts the node exporter's CPU series inside the scope: zero
// means no node exporter is scraped.
func (b Builder) NodeProbe() string {
	return "count(" + b.ScopedSelector("node_cpu_seconds_total", `mode="idle"`) + ")"
}

// HostSignals are the host query's expressions: per vLLM instance, the
// CPU, memory, network and disk pressure of the host it runs on, read from
// the node exporter. Each node expression is folded to one series per host
// and joined to the instances on that host.
func (b Builder) HostSignals(f models.Filters, window string) []SignalExpr {
	node := func(name string, extra ...string) string { return b.ScopedSelector(name, extra...) }
	byHost := func(op, expr string) string {
		return fmt.Sprintf("%s by (%s) (label_replace(%s, %q, \"$1\", \"instance\", %q))", op, HostLabel, expr, HostLabel, hostRegex)
	}
	parts := []SignalExpr{
		{"cpu_busy", "1 - " + byHost("avg", fmt.Sprintf("rate(%s[%s])", node("node_cpu_seconds_total", `mode="idle"`), window))},
		{"memory_used", byHost("max", fmt.Sprintf("1 - %s / %s", node("node_memory_MemAvailable_bytes"), node("node_memory_MemTotal_bytes")))},
		{"network_receive", byHost("sum", fmt.Sprintf("rate(%s[%s])", node("node_network_receive_bytes_total", `device!="lo"`), window))},
		{"network_transmit", byHost("sum", fmt.Sprintf("rate(%s[%s])", node("node_network_transmit_bytes_total", `device!="lo"`), window))},
		{"disk_busy", byHost("max", fmt.Sprintf("rate(%s[%s])", node("node_disk_io_time_seconds_total"), window))},
	}
	for i := range parts {
		parts[i].Expr = b.onHosts(f, "("+parts[i].Expr+")")
	}
	return parts
}

// onHosts joins a per-host expression to every selected vLLM instance on
// that host: the result has the instance and host labels.
func (b Builder) onHosts(f models.Filters, perHost string) string {
	vllmHosts := fmt.Sprintf("group by (%s, %s) (label_replace(%s, %q, \"$1\", %q, %q))",
		b.InstanceLabel, HostLabel, b.EngineSelector(f), HostLabel, b.InstanceLabel, hostRegex)
	return fmt.Sprintf("%s * on (%s) group_left () %s", vllmHosts, HostLabel, perHost)
}
