package health

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// probeProm answers the resource probe with probe, the up lookup with up
// (or err), and every other query empty.
type probeProm struct {
	spacingProm
	probe model.Vector
	up    model.Vector
	err   error
	upErr error
	// count, when set, is the error of the engine count (EnginesNow).
	count error
}

func (f probeProm) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	switch {
	case strings.HasPrefix(expr, "topk by (__name__)"):
		return f.probe, nil, f.err
	case strings.HasPrefix(expr, "group by (job, instance) (up)"):
		return f.up, nil, f.upErr
	case f.count != nil && strings.HasPrefix(expr, "group by (namespace, pod, engine, model_name)"):
		return nil, nil, f.count
	}
	return nil, nil, nil
}

func metric(ls ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(ls); i += 2 {
		m[model.LabelName(ls[i])] = model.LabelValue(ls[i+1])
	}
	return &model.Sample{Metric: m, Value: 1}
}

// TestOTLPNote: Save & test says nothing of OpenTelemetry for a store
// without target_info or trimmed counters; for an OTLP-fed one it names
// the translation, the labels joined and from where, the labels found
// nowhere, counters spelled two ways, and up missing (not when the lookup
// failed: a failed lookup claims nothing).
func TestOTLPNote(t *testing.T) {
	s := models.Settings{InstanceLabel: "pod", Identity: []string{"namespace", "pod"}, MetricPrefix: "vllm:"}
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	running := metric("__name__", "vllm:num_requests_running", "job", "vllm", "instance", "a:1", "engine", "0")
	withPod := metric("__name__", "vllm:num_requests_running", "job", "vllm", "instance", "a:1", "namespace", "inference", "pod", "vllm-0")
	info := metric("__name__", "target_info", "job", "vllm", "instance", "a:1", "k8s_namespace_name", "inference", "k8s_pod_name", "vllm-0")
	bare := metric("__name__", "target_info", "job", "vllm", "instance", "a:1", "server_port", "8000")
	up := model.Vector{metric("job", "vllm", "instance", "a:1")}
	names := []string{"vllm:num_requests_running", "vllm:num_preemptions_total"}
	tests := []struct {
		name  string
		p     probeProm
		names []string
		want  []string
		not   []string
	}{
		{"plain Prometheus", probeProm{probe: model.Vector{withPod}, up: up}, names, nil, nil},
		// Identity labels nowhere on a store without target_info: the fleet
		// table says so (identityNotices); Save & test's OTLP note does not.
		{"no target_info, labels nowhere", probeProm{probe: model.Vector{running}, up: up}, names, nil, nil},
		{"joined, with up", probeProm{probe: model.Vector{running, info}, up: up}, names,
			[]string{" (fed over OpenTelemetry (target_info found); translation: UnderscoreEscapingWithSuffixes; labels joined from target_info on job and instance: namespace from k8s_namespace_name, pod from k8s_pod_name)"},
			[]string{"no up series"}},
		{"no up", probeProm{probe: model.Vector{running, info}}, names, []string{"; no up series for the engines"}, nil},
		{"up lookup failed", probeProm{probe: model.Vector{running, info}, upErr: errors.New("boom")}, names,
			[]string{"translation: UnderscoreEscapingWithSuffixes"}, []string{"no up series"}},
		{"labels nowhere", probeProm{probe: model.Vector{running, bare}, up: up}, names,
			[]string{"namespace, pod on neither the engines' series nor target_info: servers are told apart by instance instead"}, nil},
		{"two spellings", probeProm{probe: model.Vector{running, info}, up: up}, append(names, "vllm:num_preemptions"),
			[]string{"counters spelled two ways (num_preemptions_total)"}, nil},
		{"trimmed counters without target_info", probeProm{probe: model.Vector{withPod}, up: up}, []string{"vllm:num_requests_running", "vllm:num_preemptions"},
			[]string{" (counters stored without _total (an OTLP pipeline that trims suffixes); read under both spellings)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			b := probe(ctx, tt.p, s, now)
			det := b.Detected.WithNames(tt.names, b.PrefixList())
			note := otlpNote(withDetection(ctx, det), tt.p, s, det, now)
			if tt.want == nil {
				require.Empty(t, note)
			}
			for _, w := range tt.want {
				require.Contains(t, note, w)
			}
			for _, w := range tt.not {
				require.NotContains(t, note, w)
			}
		})
	}
}

// TestProbeFailurePlansNothing: a store that cannot answer the probe is
// read as it is.
func TestProbeFailurePlansNothing(t *testing.T) {
	s := models.Settings{InstanceLabel: "pod", Identity: []string{"namespace", "pod"}, MetricPrefix: "vllm:"}
	b := probe(context.Background(), probeProm{err: errors.New("boom")}, s, time.Now())
	require.Equal(t, vllm.Detection{}, b.Detected)
}

// TestBuilderCarriesTheDetection: every helper's builder reads the check's
// detection from the context, and none without it.
func TestBuilderCarriesTheDetection(t *testing.T) {
	s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}
	d := vllm.Detection{Names: map[string]bool{"num_requests_running": true}}
	require.Equal(t, d, builder(withDetection(context.Background(), d), s).Detected)
	require.Equal(t, vllm.Detection{}, builder(context.Background(), s).Detected)
}

// TestCheckExplainsJoinConflict: Prometheus refusing the target_info join
// fails Save & test with its own error and the explanation.
func TestCheckExplainsJoinConflict(t *testing.T) {
	s := models.Settings{InstanceLabel: "pod", Identity: []string{"namespace", "pod"}, MetricPrefix: "vllm:", ScrapeInterval: time.Second}
	running := metric("__name__", "vllm:num_requests_running", "job", "vllm", "instance", "a:1", "engine", "0")
	info := metric("__name__", "target_info", "job", "vllm", "instance", "a:1", "k8s_namespace_name", "inference", "k8s_pod_name", "vllm-0")
	conflict := errors.New("found duplicate series for the match group {instance=\"a:1\", job=\"vllm\"} on the right hand-side of the operation; many-to-many matching not allowed: matching labels must be unique on one side")
	res := Check(context.Background(), probeProm{probe: model.Vector{running, info}, count: conflict}, s, time.Now())
	require.Contains(t, res.Message, "many-to-many matching not allowed")
	require.Contains(t, res.Message, "namespace, pod is read from target_info, and some job/instance has two target_info series")
	res = Check(context.Background(), probeProm{probe: model.Vector{running}, count: conflict}, s, time.Now())
	require.NotContains(t, res.Message, "target_info series", "no join, no explanation")
}
