package query_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// stackProm holds one stack's names and label shapes; it counts the stack
// lookups and fails them on demand.
type stackProm struct {
	names   []string
	shapes  []model.Metric
	lookups int
	fail    bool
}

func (p *stackProm) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	if !strings.Contains(expr, "llm_isvc_name") {
		return nil, nil, nil // not the stack lookup
	}
	p.lookups++
	if p.fail {
		return nil, nil, errors.New("down")
	}
	var vec model.Vector
	for _, m := range p.shapes {
		vec = append(vec, &model.Sample{Metric: m, Value: 1})
	}
	return vec, nil, nil
}

func (p *stackProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (p *stackProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	if p.fail {
		return nil, errors.New("down")
	}
	return p.names, nil
}

func settingsFor(t *testing.T, jsonData string) models.Settings {
	t.Helper()
	s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(jsonData)})
	require.NoError(t, err)
	return s
}

// TestProfilesResolveAuto: auto takes the profile of the stack detection
// finds, with its prefixes and identity and the evidence; an explicit
// profile wins and asks Prometheus nothing.
func TestProfilesResolveAuto(t *testing.T) {
	pod := model.Metric{"namespace": "ml", "pod": "vllm-0", "model_name": "m"}
	router := model.Metric{"namespace": "ml", "pod": "router-0", "server": "http://10.0.0.5:8000"}
	isvc := model.Metric{"namespace": "ml", "pod": "llama-kserve-0", "model_name": "m", "llm_isvc_name": "llama"}
	tests := []struct {
		name, json string
		p          stackProm
		profile    string
		prefix     string
		identity   []string
		evidence   string
		lookups    int
	}{
		{"production-stack", `{}`, stackProm{names: []string{"vllm:num_requests_running"}, shapes: []model.Metric{pod, router}},
			models.ProfileProductionStack, "vllm:", []string{"namespace", "pod"}, "router series", 1},
		{"llm-d", `{"profile":"auto"}`, stackProm{names: []string{"vllm:num_requests_running", "llm_d_epp_ready_endpoints"}, shapes: []model.Metric{pod}},
			models.ProfileLLMD, "vllm:", []string{"namespace", "pod"}, "endpoint picker", 1},
		{"kserve by names", `{}`, stackProm{names: []string{"kserve_vllm:num_requests_running"}, shapes: []model.Metric{pod}},
			models.ProfileKServe, "kserve_vllm:", []string{"namespace", "pod"}, "LLMInferenceService", 1},
		{"kserve by label", `{}`, stackProm{names: []string{"vllm:num_requests_running"}, shapes: []model.Metric{isvc}},
			models.ProfileKServe, "kserve_vllm:", []string{"namespace", "pod"}, "llm_isvc_name", 1},
		{"ray-serve", `{}`, stackProm{names: []string{"ray_vllm_num_requests_running"}},
			models.ProfileRayServe, "ray_vllm:", []string{"namespace", "ReplicaId"}, "ray_vllm", 1},
		{"plain", `{}`, stackProm{names: []string{"vllm:num_requests_running"}, shapes: []model.Metric{{"instance": "a:8000"}}},
			models.ProfilePrometheus, "vllm:", []string{"instance"}, "instance targets", 1},
		{"bare pods are plain Prometheus", `{}`, stackProm{names: []string{"vllm:num_requests_running"}, shapes: []model.Metric{pod}},
			models.ProfilePrometheus, "vllm:", []string{"instance"}, "no stack recognised", 1},
		{"explicit wins", `{"profile":"llm-d"}`, stackProm{names: []string{"vllm:num_requests_running"}, shapes: []model.Metric{pod, router}},
			models.ProfileLLMD, "vllm:", []string{"namespace", "pod"}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			r := query.NewProfiles(&p, settingsFor(t, tt.json), time.Now).Resolve(context.Background())
			require.Equal(t, tt.profile, r.Settings.Profile)
			require.Equal(t, tt.prefix, r.Settings.MetricPrefix)
			require.Equal(t, tt.identity, r.Settings.Identity)
			require.Contains(t, r.Settings.ProfileEvidence, tt.evidence)
			require.Equal(t, tt.lookups, p.lookups)
			require.NotNil(t, r.Detector)
		})
	}
}

// TestProfilesCacheAndRefresh: a resolution is trusted for ProfileTTL,
// redone after it and after Invalidate; a failed lookup keeps the last
// resolution (plain Prometheus before the first) and is retried 10s later;
// each profile has its own name detector.
func TestProfilesCacheAndRefresh(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	p := &stackProm{fail: true}
	r := query.NewProfiles(p, settingsFor(t, `{}`), func() time.Time { return now })
	ctx := context.Background()

	got := r.Resolve(ctx)
	require.Equal(t, models.ProfilePrometheus, got.Settings.Profile, "nothing resolved yet: plain Prometheus")
	require.Contains(t, got.Settings.ProfileEvidence, "stack detection failed")
	plainDetector := got.Detector

	p.fail, p.names = false, []string{"kserve_vllm:num_requests_running"}
	require.Equal(t, models.ProfilePrometheus, r.Resolve(ctx).Settings.Profile, "no new lookup right after a failed one")
	now = t0.Add(10 * time.Second)
	t0 = now
	got = r.Resolve(ctx)
	require.Equal(t, models.ProfileKServe, got.Settings.Profile, "tried again 10s after a failure")
	require.NotSame(t, plainDetector, got.Detector, "the kserve prefixes have their own detector")
	lookups := p.lookups

	p.names = []string{"ray_vllm_num_requests_running"}
	now = t0.Add(query.ProfileTTL - time.Second)
	require.Equal(t, models.ProfileKServe, r.Resolve(ctx).Settings.Profile, "still fresh")
	require.Equal(t, lookups, p.lookups)

	now = t0.Add(query.ProfileTTL)
	require.Equal(t, models.ProfileRayServe, r.Resolve(ctx).Settings.Profile, "refreshed after ProfileTTL")

	p.fail = true
	r.Invalidate()
	require.Equal(t, models.ProfileRayServe, r.Resolve(ctx).Settings.Profile, "a failed refresh keeps the last resolution")
	p.fail, p.names = false, []string{"kserve_vllm:num_requests_running"}
	r.Invalidate()
	require.Equal(t, models.ProfileKServe, r.Resolve(ctx).Settings.Profile, "Invalidate tries again at once")
}
