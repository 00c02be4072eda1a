package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
)

// Profile is what one serving stack's scrape puts in Prometheus: the metric
// prefixes its vLLM series carry, the labels that identify one vLLM server,
// and the series under vLLM's names that are not engines (and must never be
// summed with them). Facts: README "Kubernetes" section.
type Profile struct {
	// Name is the jsonData.profile value.
	Name string
	// Stack is the stack's name as health reports it.
	Stack string
	// Prefixes are the metric prefixes, the first the primary; queries
	// union the names under every prefix (Ray Serve has two spellings).
	Prefixes []string
	// Identity labels identify one vLLM server; a server is shown as their
	// values joined by "/", e.g. "inference/vllm-0".
	Identity []string
	// Exclude matchers are added to every engine selector: they drop
	// series that share vLLM's names but are not engines.
	Exclude []*labels.Matcher
	// Gateway: the stack runs the Gateway API Inference Extension's
	// endpoint picker (inference_pool_*, llm_d_epp_*).
	Gateway bool
}

// Profile names (jsonData.profile).
const (
	ProfilePrometheus      = "prometheus"
	ProfileProductionStack = "production-stack"
	ProfileLLMD            = "llm-d"
	ProfileKServe          = "kserve"
	ProfileRayServe        = "ray-serve"
)

// podIdentity is what prometheus-operator's PodMonitors and
// ServiceMonitors give every target: instance is only <podIP>:<port>, and
// pod names repeat across namespaces.
var podIdentity = []string{"namespace", "pod"}

// profiles is the table of stacks. production-stack's router exports its
// own vllm:num_requests_running/waiting with a server label and no
// model_name; the exclusions keep those out of every engine query.
var profiles = map[string]Profile{
	ProfilePrometheus: {Name: ProfilePrometheus, Stack: "plain Prometheus (instance targets)",
		Prefixes: []string{DefaultMetricPrefix}, Identity: []string{DefaultInstanceLabel}},
	ProfileProductionStack: {Name: ProfileProductionStack, Stack: "vLLM production-stack",
		Prefixes: []string{DefaultMetricPrefix}, Identity: podIdentity,
		Exclude: []*labels.Matcher{
			labels.MustNewMatcher(labels.MatchNotEqual, "model_name", ""),
			labels.MustNewMatcher(labels.MatchEqual, "server", ""),
		}},
	ProfileLLMD: {Name: ProfileLLMD, Stack: "llm-d",
		Prefixes: []string{DefaultMetricPrefix}, Identity: podIdentity, Gateway: true},
	// KServe's LLMInferenceService is llm-d based, with the same picker.
	ProfileKServe: {Name: ProfileKServe, Stack: "KServe",
		Prefixes: []string{DefaultMetricPrefix}, Identity: podIdentity, Gateway: true},
	// Ray's metrics agent serves vLLM's metrics from Ray node pods that can
	// host several replicas; ReplicaId identifies one. Older releases
	// spell names ray_vllm:x, current ones ray_vllm_x.
	ProfileRayServe: {Name: ProfileRayServe, Stack: "Ray Serve",
		Prefixes: []string{"ray_vllm:", "ray_vllm_"}, Identity: []string{"namespace", "ReplicaId"}},
}

// LookupProfile returns the named profile.
func LookupProfile(name string) (Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// ProfileNames lists the profiles, sorted, for messages and the editor.
func ProfileNames() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// applyProfile sets prefix, identity and exclusions from jsonData.profile;
// an explicit instanceLabel or metricPrefix still wins over the profile.
func applyProfile(out *Settings, js jsonSettings) error {
	name := js.Profile
	if name == "" {
		name = ProfilePrometheus
	}
	p, ok := LookupProfile(name)
	if !ok {
		return fmt.Errorf("%w: profile %q is not one of %s", ErrInvalidSettings, js.Profile, strings.Join(ProfileNames(), ", "))
	}
	out.Profile = p.Name
	out.MetricPrefix, out.MetricPrefixes = p.Prefixes[0], append([]string(nil), p.Prefixes...)
	out.Identity = append([]string(nil), p.Identity...)
	out.Exclude, out.Gateway = p.Exclude, p.Gateway
	if js.InstanceLabel != "" {
		out.Identity = []string{js.InstanceLabel}
	}
	out.InstanceLabel = out.Identity[len(out.Identity)-1]
	if js.MetricPrefix != "" {
		out.MetricPrefix, out.MetricPrefixes = js.MetricPrefix, []string{js.MetricPrefix}
	}
	return nil
}
