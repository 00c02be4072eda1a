package vllm

import (
	"strings"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Stack is the serving stack the series' names and label shapes point to,
// with the evidence, and the profile that fits it ("" when the shapes say
// Kubernetes but not which stack).
type Stack struct {
	Name, Profile, Evidence string
}

// stackRunning are the running gauges of every stack's spelling, and
// stackNames the names of every stack's vLLM series and the endpoint
// picker's families (llm-d / Gateway API Inference Extension), each also
// under KServe's kserve_ prefix.
const (
	stackRunning = `(?:kserve_)?vllm:num_requests_running|ray_vllm:num_requests_running|ray_vllm_num_requests_running`
	stackNames   = `(?:kserve_)?(?:vllm:|inference_pool_|llm_d_epp_).+|(?:ray_vllm:|ray_vllm_).+`
)

// stackLabels are the labels whose presence tells the stacks apart.
var stackLabels = []string{"namespace", "pod", "container", "service", "server", "model_name", "ReplicaId",
	"serving_kserve_io_inferenceservice", "llm_isvc_name"}

// StackNamesSelector selects, inside the scope, every series whose name
// some stack gives vLLM's or the endpoint picker's series: the stack
// detection's first look (names only).
func (b Builder) StackNamesSelector() string {
	return b.ScopedSelector("", `__name__=~`+quote(stackNames))
}

// StackShapesExpr is one sample per distinct shape of the running gauge
// under every stack's spelling, with only the labels that tell the stacks
// apart: the stack detection's second look.
func (b Builder) StackShapesExpr() string {
	return agg("group", stackLabels, b.ScopedSelector("", `__name__=~`+quote(stackRunning)))
}

// ClassifyStack names the stack from what is most specific to each: Ray's
// names, production-stack's router series, KServe's renamed names, label
// or container, the endpoint picker's metrics, then bare Kubernetes target
// labels; plain Prometheus otherwise.
func ClassifyStack(names []string, shapes model.Vector) Stack {
	has := func(prefix string) bool {
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				return true
			}
		}
		return false
	}
	seen := func(cond func(model.Metric) bool) bool {
		for _, smp := range shapes {
			if cond(smp.Metric) {
				return true
			}
		}
		return false
	}
	switch {
	case has("ray_vllm:") || has("ray_vllm_") || seen(func(m model.Metric) bool { return m["ReplicaId"] != "" }):
		return Stack{"Ray Serve", models.ProfileRayServe, "ray_vllm metric names"}
	case seen(func(m model.Metric) bool { return m["server"] != "" && m["model_name"] == "" }):
		return Stack{"vLLM production-stack", models.ProfileProductionStack, "router series with a server label and no model_name, kept apart from the engines'"}
	case seen(func(m model.Metric) bool { return strings.HasSuffix(string(m["service"]), "-engine-service") }):
		return Stack{"vLLM production-stack", models.ProfileProductionStack, "engine services named <release>-<model>-engine-service"}
	case has(models.KServePrefix+models.DefaultMetricPrefix) || seen(func(m model.Metric) bool { return m["llm_isvc_name"] != "" }):
		return Stack{"KServe", models.ProfileKServe, "LLMInferenceService series (kserve_vllm: names or the llm_isvc_name label)"}
	case seen(func(m model.Metric) bool {
		return m["container"] == "kserve-container" || m["serving_kserve_io_inferenceservice"] != ""
	}):
		return Stack{"KServe", models.ProfileKServe, "kserve-container pods"}
	case has("inference_pool_") || has("llm_d_epp_"):
		return Stack{"llm-d", models.ProfileLLMD, "endpoint picker metrics (inference_pool_*, llm_d_epp_*)"}
	case seen(func(m model.Metric) bool { return m["namespace"] != "" && m["pod"] != "" }):
		return Stack{"Kubernetes", "", "namespace and pod target labels"}
	default:
		return Stack{"plain Prometheus", models.ProfilePrometheus, "instance targets"}
	}
}
