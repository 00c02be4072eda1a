package nodeagent

import (
	"fmt"
	"io"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// MetricsContentType is the Prometheus text format 0.0.4, which every
// Prometheus version accepts without a fallback protocol.
const MetricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// gauge is one per-GPU metric family.
type gauge struct {
	name, help string
	value      func(g agentapi.GPU) *float64
}

// ratio turns a percentage reading into a 0–1 ratio.
func ratio(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return agentapi.Float(*v / 100)
}

func healthy(g agentapi.GPU) *float64 {
	if g.Error != "" {
		return agentapi.Float(0)
	}
	return agentapi.Float(1)
}

var gauges = []gauge{
	{"vllm_node_gpu_memory_used_bytes", "GPU memory in use, in bytes.", func(g agentapi.GPU) *float64 { return g.MemoryUsedBytes }},
	{"vllm_node_gpu_memory_total_bytes", "GPU memory in total, in bytes.", func(g agentapi.GPU) *float64 { return g.MemoryTotalBytes }},
	{"vllm_node_gpu_utilization_ratio", "Fraction of the last sample period in which a kernel ran on the GPU (0-1).", func(g agentapi.GPU) *float64 { return ratio(g.GPUUtilPercent) }},
	{"vllm_node_gpu_memory_utilization_ratio", "Fraction of the last sample period in which device memory was read or written (0-1).", func(g agentapi.GPU) *float64 { return ratio(g.MemUtilPercent) }},
	{"vllm_node_gpu_temperature_celsius", "GPU core temperature, in degrees Celsius.", func(g agentapi.GPU) *float64 { return g.TemperatureC }},
	{"vllm_node_gpu_power_watts", "GPU power draw, in watts.", func(g agentapi.GPU) *float64 { return g.PowerWatts }},
	{"vllm_node_gpu_power_limit_watts", "GPU enforced power limit, in watts.", func(g agentapi.GPU) *float64 { return g.PowerLimitWatts }},
	{"vllm_node_gpu_healthy", "1 when every reading of the GPU succeeded, 0 when some failed (see /v1/gpus for the error).", healthy},
}

// WriteMetrics writes the GPUs as Prometheus text, one gauge family per
// reading, labelled gpu, uuid, name and, where mapped, vllm_instance and
// model_name. Unknown readings are left out.
func WriteMetrics(w io.Writer, gpus []agentapi.GPU) error {
	for _, gg := range gauges {
		fam := family(gg, gpus)
		if len(fam.Metric) == 0 {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(w, fam); err != nil {
			return fmt.Errorf("writing %s: %w", gg.name, err)
		}
	}
	return nil
}

func family(gg gauge, gpus []agentapi.GPU) *dto.MetricFamily {
	fam := &dto.MetricFamily{Name: &gg.name, Help: &gg.help, Type: dto.MetricType_GAUGE.Enum()}
	for _, g := range gpus {
		v := gg.value(g)
		if v == nil {
			continue
		}
		fam.Metric = append(fam.Metric, &dto.Metric{Label: gpuLabels(g), Gauge: &dto.Gauge{Value: v}})
	}
	return fam
}

func gpuLabels(g agentapi.GPU) []*dto.LabelPair {
	ls := []*dto.LabelPair{label("gpu", strconv.Itoa(g.Index)), label("uuid", g.UUID), label("name", g.Name)}
	if g.VLLMInstance != "" {
		ls = append(ls, label("vllm_instance", g.VLLMInstance), label("model_name", g.Model))
	}
	return ls
}

func label(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: &name, Value: &value}
}
