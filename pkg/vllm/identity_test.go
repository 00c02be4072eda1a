package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// profileBuilder is the builder a data source with the profile gets.
func profileBuilder(name string) Builder {
	p, ok := models.LookupProfile(name)
	if !ok {
		panic("unknown profile " + name)
	}
	return ForSettings(models.Settings{Profile: p.Name, MetricPrefix: p.Prefixes[0], MetricPrefixes: p.Prefixes,
		Identity: p.Identity, InstanceLabel: p.Identity[len(p.Identity)-1], Exclude: p.Exclude, Gateway: p.Gateway})
}

func TestIdentityGrouping(t *testing.T) {
	tests := []struct {
		profile  string
		instance []string
		engine   []string
		name     string
	}{
		{models.ProfilePrometheus, []string{"instance"}, []string{"instance", "engine"}, "10.0.0.1:8000"},
		{models.ProfileProductionStack, []string{"namespace", "pod"}, []string{"namespace", "pod", "engine"}, "inference/vllm-0"},
		{models.ProfileKServe, []string{"namespace", "pod"}, []string{"namespace", "pod", "engine"}, "inference/vllm-0"},
		{models.ProfileRayServe, []string{"namespace", "ReplicaId"}, []string{"namespace", "ReplicaId", "engine"}, "inference/r1"},
	}
	ls := map[string]string{"instance": "10.0.0.1:8000", "namespace": "inference", "pod": "vllm-0", "ReplicaId": "r1"}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			b := profileBuilder(tt.profile)
			require.Equal(t, tt.instance, b.GroupLabels(models.GroupInstance))
			require.Equal(t, tt.engine, b.GroupLabels(models.GroupInstanceEngine))
			require.Equal(t, append(tt.instance, "engine", "model_name"), b.EngineLabels())
			require.Equal(t, tt.name, b.InstanceOf(ls))
			// Grouping must not alias the profile's identity slice.
			g := b.GroupLabels(models.GroupInstanceEngine)
			g[0] = "x"
			require.Equal(t, tt.instance[0], b.IdentityLabels()[0])
		})
	}
}

// Instance filters of namespace/pod names become per-label matchers;
// a name with a "/" in its last part keeps it.
func TestInstanceFilterMatchers(t *testing.T) {
	b := profileBuilder(models.ProfileLLMD)
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"one pod", []string{"inference/vllm-0"}, []string{`namespace="inference"`, `pod="vllm-0"`}},
		{"two pods of a namespace", []string{"inference/vllm-1", "inference/vllm-0"}, []string{`namespace="inference"`, `pod=~"vllm-0|vllm-1"`}},
		{"two namespaces", []string{"a/p", "b/q"}, []string{`namespace=~"a|b"`, `pod=~"p|q"`}},
		{"bare pod name", []string{"vllm-0"}, []string{`pod="vllm-0"`}},
		{"regex characters are literal", []string{"a.b/p+1"}, []string{`namespace="a.b"`, `pod="p+1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, b.instanceMatchers(tt.names))
		})
	}
}

// production-stack's router series (server label, no model_name) are cut
// from every engine selector, never from agent or discovery selectors.
func TestExclusionsOnEngineSelectorsOnly(t *testing.T) {
	b := profileBuilder(models.ProfileProductionStack)
	notEmpty := labels.MustNewMatcher(labels.MatchNotEqual, "model_name", "")
	noServer := labels.MustNewMatcher(labels.MatchEqual, "server", "")
	for _, g := range []models.Grouping{models.GroupNone, models.GroupInstance} {
		for what, expr := range expressions(t, b, g, models.Filters{}) {
			for _, vs := range allSelectors(t, expr) {
				requireHas(t, vs.LabelMatchers, notEmpty, what+": "+vs.String())
				requireHas(t, vs.LabelMatchers, noServer, what+": "+vs.String())
			}
		}
	}
	require.NotContains(t, b.ScopedSelector("up", `job="vllm-node-agent"`), "server")
	require.NotContains(t, b.GPUSeries(nil), "model_name")
}

// Ray Serve: both spellings are unioned and detected.
func TestRayPrefixes(t *testing.T) {
	b := profileBuilder(models.ProfileRayServe)
	q := b.Queue(models.GroupInstance, models.Filters{})
	require.Contains(t, q, "(ray_vllm:num_requests_running or on (namespace, ReplicaId) ray_vllm_num_requests_running)")
	require.Equal(t, `{__name__=~"(?:ray_vllm:|ray_vllm_).+"}`, b.NameSelector())
	det := DetectAll([]string{"ray_vllm_num_requests_running", "ray_vllm_kv_cache_usage_perc", "ray_vllm:request_queue_time_seconds_bucket", "vllm:num_requests_swapped"}, b.PrefixList())
	require.True(t, det.Has("num_requests_running"))
	require.True(t, det.Has("kv_cache_usage_perc"))
	require.True(t, det.Has("request_queue_time_seconds"))
	require.False(t, det.Has("num_requests_swapped"), "a plain vllm: name is not Ray's")
	require.Equal(t, GenV1, det.Generation)
	b.Detected = det
	kv := b.names(KVUsage)
	require.Equal(t, []string{"ray_vllm:kv_cache_usage_perc", "ray_vllm_kv_cache_usage_perc"}, kv)
}

func TestRecentIdentities(t *testing.T) {
	b := profileBuilder(models.ProfileProductionStack)
	e := b.RecentIdentities(models.Filters{Models: []string{"m"}}, "1h")
	require.True(t, strings.HasPrefix(e, "group by (namespace, pod) ("), e)
	require.NotEmpty(t, allSelectors(t, e))
}

// Every expression of every profile parses, and an instance filter of
// namespace/pod names matches exactly those labels' values.
func TestProfileExpressionsParse(t *testing.T) {
	for _, name := range models.ProfileNames() {
		b := profileBuilder(name)
		id := b.IdentityLabels()
		inst := strings.Repeat(`a"b|c/`, len(id)-1) + `p.d+`
		for _, g := range []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine} {
			f := models.Filters{Models: []string{"m"}, Instances: []string{inst}}
			for what, expr := range expressions(t, b, g, f) {
				t.Run(name+"/"+string(g)+"/"+what, func(t *testing.T) {
					for _, vs := range allSelectors(t, expr) {
						if strings.HasPrefix(vs.Name, "inference_pool_") || strings.HasPrefix(vs.Name, "llm_d_epp_") {
							continue // the picker's gauges: see TestGatewaySignals
						}
						require.True(t, strings.HasPrefix(vs.Name, b.Prefix) || strings.HasPrefix(vs.Name, b.PrefixList()[len(b.PrefixList())-1]), vs.Name)
						if strings.HasPrefix(what, "series") {
							continue
						}
						parts := strings.SplitN(inst, "/", len(id))
						for i, l := range id {
							requireHas(t, vs.LabelMatchers, labels.MustNewMatcher(labels.MatchEqual, l, parts[i]), what)
						}
					}
				})
			}
		}
	}
}

// The picker's gauges join the queue only under profiles whose stacks run
// one, inside the scope, both name sets, per endpoint only by instance.
func TestGatewaySignals(t *testing.T) {
	require.Empty(t, profileBuilder(models.ProfilePrometheus).GatewaySignals(models.GroupInstance))
	require.Empty(t, profileBuilder(models.ProfileProductionStack).GatewaySignals(models.GroupInstance))
	b := profileBuilder(models.ProfileLLMD)
	b.Scope = mustMatchers(t, `namespace="llm"`)
	names := func(sigs []SignalExpr) []string {
		var out []string
		for _, s := range sigs {
			out = append(out, s.Name)
			for _, vs := range allSelectors(t, s.Expr) {
				requireHas(t, vs.LabelMatchers, b.Scope[0], s.Name)
			}
		}
		return out
	}
	require.Equal(t, []string{GatewayPoolQueue, GatewayPoolKV, GatewayReady, GatewayEndpointQueue}, names(b.GatewaySignals(models.GroupInstance)))
	require.Equal(t, []string{GatewayPoolQueue, GatewayPoolKV, GatewayReady}, names(b.GatewaySignals(models.GroupNone)))
	q := b.Queue(models.GroupInstance, models.Filters{})
	for _, n := range []string{"inference_pool_per_pod_queue_size", "llm_d_epp_per_endpoint_queue_size", `"model_server_endpoint"`} {
		require.Contains(t, q, n)
	}
}
