package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// containerUnits are the Grafana units of the container signals.
var containerUnits = map[string]string{
	vllm.ContainerCPUUsed: frames.UnitCores, vllm.ContainerCPULimit: frames.UnitCores,
	vllm.ContainerCPUOfLimit: "percentunit", vllm.ContainerCPUThrottled: "percentunit",
	vllm.ContainerMemoryUsed: "bytes", vllm.ContainerMemoryLimit: "bytes", vllm.ContainerMemoryOfLimit: "percentunit",
	vllm.ContainerOOMEvents: "short", vllm.ContainerRestarts: "short",
	vllm.ContainerNetReceive: "Bps", vllm.ContainerNetTransmit: "Bps", vllm.ContainerFSRead: "Bps", vllm.ContainerFSWrite: "Bps",
}

// container answers cAdvisor's view of each vLLM server's container. A
// Prometheus without cAdvisor gets an empty answer and a notice, never an
// error; containers without limits get a notice saying "no limit".
func (p *plan) container(ctx context.Context, o models.ContainerOptions) (data.Frames, error) {
	sigs := p.builder.ContainerSignals(p.query.Filters, p.window, p.settings.container)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	notices := p.noticesFor(warningNotices(warn))
	if !hasSignal(m, vllm.ContainerMemoryUsed) && !hasSignal(m, vllm.ContainerCPUUsed) {
		notices = append(notices, p.containerNotice(ctx))
	} else {
		notices = append(notices, noLimitNotices(p.builder, m)...)
	}
	notices = append(notices, p.unmatchedMap(m)...)
	identity := append(append([]string(nil), p.builder.IdentityLabels()...), vllm.ContainerLabel)
	executed := p.executed(exprsOf(sigs)...)
	if o.Format == "table" {
		return data.Frames{frames.ContainerTable(m, p.builder.InstanceOf, executed, notices)}, nil
	}
	return frames.TimeSeries(m, frames.SeriesOptions{Units: containerUnits, Legend: p.query.Legend,
		GroupLabels: identity, Executed: executed, Notices: notices}), nil
}

func hasSignal(m prom.Matrix, sig string) bool {
	for _, s := range m {
		if s.Labels[vllm.SignalTagLabel] == sig {
			return true
		}
	}
	return false
}

// containerNotice says why the answer is empty: no cAdvisor at all, or
// none of its containers joins a selected vLLM server.
func (p *plan) containerNotice(ctx context.Context) data.Notice {
	vec, _, err := p.memo.instantQuery(ctx, p.builder.ContainerProbe(), p.timeRange.End, p.timeRange.Step)
	if err == nil && len(vec) == 0 {
		return data.Notice{Severity: data.NoticeSeverityInfo, Text: "No cAdvisor is scraped (no container_memory_working_set_bytes series in scope): " +
			"container CPU, memory and throttling are not shown. On Kubernetes scrape the kubelet's /metrics/cadvisor (kube-prometheus-stack does); elsewhere run cAdvisor beside the vLLM servers."}
	}
	return data.Notice{Severity: data.NoticeSeverityWarning, Text: "cAdvisor is scraped but none of its containers joins a selected vLLM server: " +
		"on Kubernetes both must carry namespace, pod and container (prometheus-operator's monitors and the kubelet do; kubelets before 1.16 need containerLabels legacy); " +
		"standalone cAdvisor joins by container name = the host part of the instance label, or by the data source's containerMap."}
}

// noLimitNotices name the containers that have no CPU or memory limit:
// their share of limit is not shown ("no limit"), never divided by zero.
func noLimitNotices(b vllm.Builder, m prom.Matrix) []data.Notice {
	has := map[string]map[string]bool{}
	for _, s := range m {
		key := containerKey(b, s.Labels)
		if has[key] == nil {
			has[key] = map[string]bool{}
		}
		has[key][s.Labels[vllm.SignalTagLabel]] = true
	}
	var out []data.Notice
	for _, lim := range []struct{ used, limit, what string }{
		{vllm.ContainerCPUUsed, vllm.ContainerCPULimit, "CPU"}, {vllm.ContainerMemoryUsed, vllm.ContainerMemoryLimit, "memory"}} {
		var none []string
		for key, sigs := range has {
			if sigs[lim.used] && !sigs[lim.limit] {
				none = append(none, key)
			}
		}
		if len(none) > 0 {
			sort.Strings(none)
			out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
				"%s: no limit (no %s share of limit or throttling is shown for them): %s", lim.what, lim.what, strings.Join(none, ", "))})
		}
	}
	return out
}

// containerKey names a series' server and container as its display name
// does, "server/container".
func containerKey(b vllm.Builder, ls map[string]string) string {
	return strings.TrimSuffix(b.InstanceOf(ls)+"/"+ls[vllm.ContainerLabel], "/")
}

// unmatchedMap warns of containerMap entries that matched nothing: no
// cAdvisor row with that id or name, or no selected server of that name.
func (p *plan) unmatchedMap(m prom.Matrix) []data.Notice {
	seen := map[string]bool{}
	for _, s := range m {
		seen[s.Labels[p.builder.InstanceLabel]+"\x00"+s.Labels[vllm.ContainerLabel]] = true
	}
	var out []data.Notice
	for _, e := range p.settings.container.Map {
		label, value := e.Key()
		if !seen[e.Instance+"\x00"+value] {
			out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: fmt.Sprintf(
				"containerMap entry %s %q → instance %q matched nothing: cAdvisor has no container with that %s in range, or no selected vLLM server has that %s",
				label, value, e.Instance, label, p.builder.InstanceLabel)})
		}
	}
	return out
}
