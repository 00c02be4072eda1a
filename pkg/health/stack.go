package health

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// stack is the serving stack the series' shapes point to, with the
// evidence, and the profile that fits it ("" when the shapes say
// Kubernetes but not which stack).
type stack struct {
	name, profile, evidence string
}

// stackNames are the running gauges of every stack's spelling, and the
// endpoint picker's metric families (llm-d / Gateway API Inference Extension).
const (
	stackRunning = `vllm:num_requests_running|ray_vllm:num_requests_running|ray_vllm_num_requests_running`
	stackNames   = `(?:vllm:|ray_vllm:|ray_vllm_|inference_pool_|llm_d_epp_).+`
)

// stackLabels are the labels whose presence tells the stacks apart.
var stackLabels = []string{"namespace", "pod", "container", "service", "server", "model_name", "ReplicaId", "serving_kserve_io_inferenceservice"}

// detectStack looks at the names and label shapes inside the data
// source's scope, whatever its profile, so it can say when the profile
// does not fit what Prometheus holds.
func detectStack(ctx context.Context, p Prometheus, s models.Settings, now time.Time) (stack, error) {
	b := vllm.Builder{Scope: s.Selector}
	names, err := p.MetricNames(ctx, b.ScopedSelector("", `__name__=~"`+stackNames+`"`), now.Add(-lookback), now)
	if err != nil {
		return stack{}, err
	}
	expr := fmt.Sprintf("group by (%s) (%s)", strings.Join(stackLabels, ", "), b.ScopedSelector("", `__name__=~"`+stackRunning+`"`))
	vec, _, err := p.Query(ctx, expr, now)
	if err != nil {
		return stack{}, err
	}
	return classify(names, vec), nil
}

// classify names the stack from what is most specific to each: Ray's
// names, production-stack's router series, KServe's container or label,
// the endpoint picker's metrics, then bare Kubernetes target labels.
func classify(names []string, vec model.Vector) stack {
	has := func(prefix string) bool {
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				return true
			}
		}
		return false
	}
	seen := func(cond func(model.Metric) bool) bool {
		for _, smp := range vec {
			if cond(smp.Metric) {
				return true
			}
		}
		return false
	}
	switch {
	case has("ray_vllm:") || has("ray_vllm_") || seen(func(m model.Metric) bool { return m["ReplicaId"] != "" }):
		return stack{"Ray Serve", models.ProfileRayServe, "ray_vllm metric names"}
	case seen(func(m model.Metric) bool { return m["server"] != "" && m["model_name"] == "" }):
		return stack{"vLLM production-stack", models.ProfileProductionStack, "router series with a server label and no model_name, kept apart from the engines'"}
	case seen(func(m model.Metric) bool { return strings.HasSuffix(string(m["service"]), "-engine-service") }):
		return stack{"vLLM production-stack", models.ProfileProductionStack, "engine services named <release>-<model>-engine-service"}
	case seen(func(m model.Metric) bool {
		return m["container"] == "kserve-container" || m["serving_kserve_io_inferenceservice"] != ""
	}):
		return stack{"KServe", models.ProfileKServe, "kserve-container pods"}
	case has("inference_pool_") || has("llm_d_epp_"):
		return stack{"llm-d", models.ProfileLLMD, "endpoint picker metrics (inference_pool_*, llm_d_epp_*)"}
	case seen(func(m model.Metric) bool { return m["namespace"] != "" && m["pod"] != "" }):
		return stack{"Kubernetes", "", "namespace and pod target labels"}
	default:
		return stack{"plain Prometheus", models.ProfilePrometheus, "instance targets"}
	}
}

// note is appended to the health message: the stack, and the profile to
// set when the configured one does not fit. A plain fleet under the
// default profile needs no words.
func (st stack) note(s models.Settings) string {
	configured := s.Profile
	if configured == "" {
		configured = models.ProfilePrometheus
	}
	if st.name == "" || (st.profile == models.ProfilePrometheus && configured == models.ProfilePrometheus) {
		return ""
	}
	msg := fmt.Sprintf(". Stack: %s (%s)", st.name, st.evidence)
	switch {
	case st.profile == configured:
		return msg + fmt.Sprintf("; profile %s", configured)
	case st.profile == "" && configured != models.ProfilePrometheus:
		return msg + fmt.Sprintf("; profile %s", configured)
	case st.profile == "":
		return msg + fmt.Sprintf(". The profile is %s, which tells servers apart by %s (the pod IP here): set the profile of your stack (llm-d, kserve or production-stack) to use namespace/pod", configured, s.InstanceLabel)
	default:
		return msg + fmt.Sprintf(". The profile is %s, which does not fit: set profile %s", configured, st.profile)
	}
}
