package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func sample(ls map[string]string) *model.Sample {
	m := model.Metric{}
	for k, v := range ls {
		m[model.LabelName(k)] = model.LabelValue(v)
	}
	return &model.Sample{Metric: m, Value: 1}
}

func TestPlanResourceJoin(t *testing.T) {
	running := map[string]string{"__name__": "vllm:num_requests_running", "job": "vllm", "instance": "10.0.0.1:8000", "engine": "0", "model_name": "m"}
	withPod := map[string]string{"__name__": "vllm:num_requests_running", "job": "vllm", "instance": "a:1", "namespace": "inference", "pod": "vllm-0"}
	tests := []struct {
		name  string
		probe model.Vector
		want  map[string]string
		shape OTLPShape
	}{
		{"no target_info: nothing to join", model.Vector{sample(running)}, nil, OTLPShape{}},
		{"labels nowhere and no target_info", model.Vector{sample(running)}, nil, OTLPShape{}},
		{"one identity label found: no fallback", model.Vector{sample(map[string]string{"__name__": "vllm:num_requests_running", "job": "vllm", "instance": "a:1", "pod": "p"})},
			nil, OTLPShape{}},
		{"labels on the series: no join", model.Vector{sample(withPod), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "a:1", "k8s_pod_name": "x"})},
			nil, OTLPShape{TargetInfo: true, Known: true}},
		{"escaped Kubernetes attributes", model.Vector{sample(running), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "10.0.0.1:8000",
			"k8s_namespace_name": "inference", "k8s_pod_name": "vllm-0", "server_port": "8000"})},
			map[string]string{"namespace": "k8s_namespace_name", "pod": "k8s_pod_name"}, OTLPShape{TargetInfo: true, Known: true}},
		{"UTF-8 attributes", model.Vector{sample(running), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "10.0.0.1:8000",
			"k8s.namespace.name": "inference", "k8s.pod.name": "vllm-0"})},
			map[string]string{"namespace": "k8s.namespace.name", "pod": "k8s.pod.name"}, OTLPShape{TargetInfo: true, Known: true, UTF8Labels: true}},
		{"the label's own name on target_info", model.Vector{sample(running), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "10.0.0.1:8000",
			"namespace": "inference", "pod": "vllm-0", "k8s_pod_name": "other"})},
			map[string]string{"namespace": "namespace", "pod": "pod"}, OTLPShape{TargetInfo: true, Known: true}},
		{"promoted under OpenTelemetry's names: read directly", model.Vector{sample(map[string]string{"__name__": "vllm:num_requests_running", "job": "vllm", "instance": "a:1",
			"k8s_namespace_name": "inference", "k8s_pod_name": "vllm-0"}), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "a:1", "k8s_pod_name": "vllm-0"})},
			nil, OTLPShape{TargetInfo: true, Known: true}},
		{"target_info without the labels", model.Vector{sample(running), sample(map[string]string{"__name__": "target_info", "job": "vllm", "instance": "10.0.0.1:8000"})},
			nil, OTLPShape{TargetInfo: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, shape := PlanResourceJoin([]string{"namespace", "pod", "llm_isvc_role"}, []string{"namespace", "pod"}, tt.probe)
			if tt.name == "target_info without the labels" || tt.name == "labels nowhere and no target_info" {
				require.Equal(t, []string{"namespace", "pod"}, j.Unresolved)
				b := Builder{InstanceLabel: "instance", Identity: []string{"namespace", "pod"}, Detected: Detection{Join: j}}
				require.Equal(t, []string{"instance"}, b.IdentityLabels(), "servers are told apart by instance")
				return
			}
			if tt.name == "one identity label found: no fallback" {
				require.Empty(t, j.Unresolved)
			}
			if strings.HasPrefix(tt.name, "promoted") {
				require.Equal(t, map[string]string{"namespace": "k8s_namespace_name", "pod": "k8s_pod_name"}, j.Promoted)
			}
			if tt.want == nil {
				require.False(t, j.Active())
			} else {
				require.Equal(t, tt.want, j.From)
			}
			require.Equal(t, tt.shape, shape)
		})
	}
}

func TestTranslationNamed(t *testing.T) {
	escaped, utf8 := OTLPShape{TargetInfo: true, Known: true}, OTLPShape{TargetInfo: true, Known: true, UTF8Labels: true}
	tests := []struct {
		shape   OTLPShape
		trimmed bool
		want    string
	}{
		{OTLPShape{}, false, ""},
		{escaped, false, "UnderscoreEscapingWithSuffixes"},
		{escaped, true, "UnderscoreEscapingWithoutSuffixes"},
		{utf8, false, "NoUTF8EscapingWithSuffixes (or NoTranslation: vLLM's names are the same under both)"},
		{utf8, true, "NoTranslation (counters without _total, attribute labels with dots)"},
		{OTLPShape{TargetInfo: true}, true, "counters without _total (NoTranslation or UnderscoreEscapingWithoutSuffixes, with a receiver that trims suffixes)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, Detection{OTLP: tt.shape, TrimmedCounters: tt.trimmed}.Translation())
		})
	}
}

func TestCountersWithoutTotal(t *testing.T) {
	tests := []struct {
		name    string
		names   []string
		want    string
		two     []string
		trimmed bool // some counter is stored only without _total
	}{
		{"trimmed only", []string{"vllm:num_requests_running", "vllm:num_preemptions"}, "rate(vllm:num_preemptions[1m])", nil, true},
		{"with _total only", []string{"vllm:num_requests_running", "vllm:num_preemptions_total"}, "rate(vllm:num_preemptions_total[1m])", nil, false},
		{"spelled two ways", []string{"vllm:num_preemptions", "vllm:num_preemptions_total"},
			"(rate(vllm:num_preemptions_total[1m]) or rate(vllm:num_preemptions[1m]))", []string{"num_preemptions_total"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Detect(tt.names, "vllm:")
			require.Equal(t, tt.want, Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: d}.rateUnion(Preemptions, models.Filters{}, "", "1m"))
			require.Equal(t, tt.two, d.TwoSpellings())
			require.True(t, d.HasSignal(Preemptions))
			require.Equal(t, tt.trimmed, d.TrimmedCounters)
		})
	}
}

// joinedBuilder is a Kubernetes-profile builder over an OTLP-fed store
// whose namespace and pod are on target_info only, under src's spelling.
func joinedBuilder(ns, pod string) Builder {
	return Builder{Prefix: "vllm:", InstanceLabel: "instance", Identity: []string{"namespace", "pod"},
		Scope:    []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "namespace", "inference")},
		Detected: Detection{Names: map[string]bool{"num_requests_running": true}, Join: ResourceJoin{From: map[string]string{"namespace": ns, "pod": pod}}}}
}

func TestJoinedExpressions(t *testing.T) {
	for _, src := range [][2]string{{"k8s_namespace_name", "k8s_pod_name"}, {"k8s.namespace.name", "k8s.pod.name"}} {
		b := joinedBuilder(src[0], src[1])
		f := models.Filters{Instances: []string{"inference/vllm-0"}}
		exprs := map[string]string{"queue": b.Queue(models.GroupInstance, f), "engines now": b.EnginesNow(f),
			"last seen": b.EnginesLastSeen(f, 3600e9, 15e9), "name selector": b.NameSelector()}
		for _, s := range b.FleetSignals(f, "1m", "1h") {
			exprs["fleet "+s.Name] = s.Expr
		}
		for name, expr := range exprs {
			t.Run(src[0]+"/"+name, func(t *testing.T) {
				e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
				require.NoError(t, err, expr)
				parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
					vs, ok := n.(*parser.VectorSelector)
					if !ok {
						return nil
					}
					for _, m := range vs.LabelMatchers {
						// The series never carry namespace or pod: a matcher on them would select nothing.
						if vs.Name != TargetInfoName {
							require.NotContains(t, []string{"namespace", "pod"}, m.Name, expr)
						}
					}
					if vs.Name == TargetInfoName && name != "fleet up" {
						require.Contains(t, vs.String(), "inference", expr)
					}
					return nil
				})
				if strings.HasPrefix(name, "name") {
					require.NotContains(t, expr, "inference")
				}
			})
		}
	}
}

func TestJoinKeepsEnginesWithoutTargetInfoWhenUnfiltered(t *testing.T) {
	b := joinedBuilder("k8s_namespace_name", "k8s_pod_name")
	b.Scope = nil
	require.Equal(t, `(vllm:num_requests_running * on (job, instance) group_left (namespace, pod) max by (job, instance, namespace, pod) `+
		`(label_replace(label_replace(target_info, "namespace", "$1", "k8s_namespace_name", "(.*)"), "pod", "$1", "k8s_pod_name", "(.*)"))`+
		` or on (job, instance) vllm:num_requests_running)`, b.union(Running, models.Filters{}, ""))
}

func TestPromotedAttributesReadDirectly(t *testing.T) {
	b := joinedBuilder("", "")
	b.Detected.Join = ResourceJoin{Promoted: map[string]string{"namespace": "k8s_namespace_name", "pod": "k8s_pod_name"}}
	require.Equal(t, `sum by (namespace, pod) (label_replace(label_replace(vllm:num_requests_running{k8s_namespace_name="inference", k8s_namespace_name="inference", k8s_pod_name="vllm-0"}, `+
		`"namespace", "$1", "k8s_namespace_name", "(.*)"), "pod", "$1", "k8s_pod_name", "(.*)"))`,
		agg("sum", b.IdentityLabels(), b.union(Running, models.Filters{Instances: []string{"inference/vllm-0"}}, "")))
	require.Contains(t, b.EnginesLastSeen(models.Filters{}, 3600e9, 15e9), "timestamp(vllm:num_requests_running{", "timestamp() stays on the selector")
}

func TestProbesOnlyForLabelsBeyondTheInstance(t *testing.T) {
	scope := []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "a")}
	tests := []struct {
		name string
		b    Builder
		want bool
	}{
		{"plain: instance only", Builder{Identity: []string{"instance"}}, false},
		{"no identity", Builder{}, false},
		{"Kubernetes identity", Builder{Identity: []string{"namespace", "pod"}}, true},
		{"explicit role label", Builder{Identity: []string{"instance"}, RoleLabel: "role"}, true},
		{"a scope", Builder{Identity: []string{"instance"}, Scope: scope}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.want, tt.b.Probes()) })
	}
}
