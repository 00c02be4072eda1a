package health

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestClassifyStack(t *testing.T) {
	pod := model.Metric{"namespace": "inference", "pod": "vllm-0", "model_name": "m", "engine": "0"}
	with := func(extra model.Metric) model.Metric {
		m := pod.Clone()
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		names   []string
		series  []model.Metric
		profile string
		stack   string
	}{
		{"plain instances", []string{"vllm:num_requests_running"}, []model.Metric{{"instance": "a:8000", "model_name": "m"}}, models.ProfilePrometheus, "plain Prometheus"},
		{"ray underscore names", []string{"ray_vllm_num_requests_running"}, nil, models.ProfileRayServe, "Ray Serve"},
		{"ray colon names", []string{"ray_vllm:num_requests_running"}, nil, models.ProfileRayServe, "Ray Serve"},
		{"production-stack router", []string{"vllm:num_requests_running"},
			[]model.Metric{pod, {"namespace": "inference", "pod": "router-0", "server": "http://10.0.0.5:8000"}}, models.ProfileProductionStack, "vLLM production-stack"},
		{"production-stack engine service", []string{"vllm:num_requests_running"},
			[]model.Metric{with(model.Metric{"service": "rel-llama-engine-service"})}, models.ProfileProductionStack, "vLLM production-stack"},
		{"kserve container", []string{"vllm:num_requests_running"},
			[]model.Metric{with(model.Metric{"container": "kserve-container"})}, models.ProfileKServe, "KServe"},
		{"llm-d endpoint picker", []string{"vllm:num_requests_running", "inference_pool_average_queue_size"},
			[]model.Metric{with(model.Metric{"container": "vllm"})}, models.ProfileLLMD, "llm-d"},
		{"bare pods", []string{"vllm:num_requests_running"}, []model.Metric{pod}, "", "Kubernetes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vec model.Vector
			for _, m := range tt.series {
				vec = append(vec, &model.Sample{Metric: m})
			}
			st := classify(tt.names, vec)
			require.Equal(t, tt.profile, st.profile)
			require.Equal(t, tt.stack, st.name)
		})
	}
}

func TestStackNote(t *testing.T) {
	ps := stack{"vLLM production-stack", models.ProfileProductionStack, "router"}
	tests := []struct {
		name       string
		st         stack
		configured string
		want       string
	}{
		{"plain under the default says nothing", stack{"plain Prometheus", models.ProfilePrometheus, "x"}, "", ""},
		{"fits", ps, models.ProfileProductionStack, ". Stack: vLLM production-stack (router); profile production-stack"},
		{"does not fit", ps, models.ProfileLLMD, ". Stack: vLLM production-stack (router). The profile is llm-d, which does not fit: set profile production-stack"},
		{"pods under the default", stack{"Kubernetes", "", "pods"}, "", "set the profile of your stack (llm-d, kserve or production-stack)"},
		{"pods under a Kubernetes profile", stack{"Kubernetes", "", "pods"}, models.ProfileKServe, ". Stack: Kubernetes (pods); profile kserve"},
		{"plain under a Kubernetes profile", stack{"plain Prometheus", models.ProfilePrometheus, "instance targets"}, models.ProfileKServe, "set profile prometheus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.st.note(models.Settings{Profile: tt.configured, InstanceLabel: "instance"})
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tt.want)
		})
	}
}

// TestAutoNote: under auto, health names the profile chosen and why, and
// still says what to set where Kubernetes pods fit no stack.
func TestAutoNote(t *testing.T) {
	ps := stack{"vLLM production-stack", models.ProfileProductionStack, "router"}
	auto := func(profile, evidence string, identity ...string) models.Settings {
		return models.Settings{AutoProfile: true, Profile: profile, ProfileEvidence: evidence, Identity: identity, InstanceLabel: identity[len(identity)-1]}
	}
	tests := []struct {
		name    string
		st      stack
		s       models.Settings
		want    string
		wantNot string
	}{
		{"chose the stack", ps, auto(models.ProfileProductionStack, "vLLM production-stack: router series", "namespace", "pod"),
			". Profile auto: production-stack (vLLM production-stack: router series)", "does not fit"},
		{"plain says so too", stack{"plain Prometheus", models.ProfilePrometheus, "instance targets"}, auto(models.ProfilePrometheus, "plain Prometheus: instance targets", "instance"),
			". Profile auto: prometheus (plain Prometheus: instance targets)", "set the profile"},
		{"bare pods", stack{"Kubernetes", "", "pods"}, auto(models.ProfilePrometheus, "Kubernetes (pods), no stack recognised", "instance"),
			"set the profile of your stack (llm-d, kserve or production-stack)", "does not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.st.note(tt.s)
			require.Contains(t, got, tt.want)
			require.NotContains(t, got, tt.wantNot)
		})
	}
}
