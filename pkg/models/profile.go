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
// summed with them). Facts: docs/kubernetes.md.
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
	// GatewayPrefixes are put before the picker's names, "" for its own
	// names; KServe's ServiceMonitor adds kserve_. Empty means {""}.
	GatewayPrefixes []string
}

// Profile names (jsonData.profile). ProfileAuto is no stack: it stands
// for the profile that stack detection finds (pkg/query resolves it).
const (
	ProfileAuto            = "auto"
	ProfilePrometheus      = "prometheus"
	ProfileProductionStack = "production-stack"
	ProfileLLMD            = "llm-d"
	ProfileKServe          = "kserve"
	ProfileRayServe        = "ray-serve"
)

// KServePrefix is what KServe's LLMInferenceService monitors put before
// every series name (metric relabelling __name__ -> kserve_$1).
const KServePrefix = "kserve_"

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
	// KServe's LLMInferenceService is llm-d based, with the same picker;
	// its controller's PodMonitor and the scheduler's ServiceMonitor rename
	// every series kserve_<name>. Plain names are for users' own monitors.
	ProfileKServe: {Name: ProfileKServe, Stack: "KServe",
		Prefixes: []string{KServePrefix + DefaultMetricPrefix, DefaultMetricPrefix}, Identity: podIdentity,
		Gateway: true, GatewayPrefixes: []string{KServePrefix, ""}},
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

// ProfileChoices lists every jsonData.profile value: auto, then the stacks.
func ProfileChoices() []string {
	return append([]string{ProfileAuto}, ProfileNames()...)
}

// applyProfile sets prefix, identity and exclusions from jsonData.profile.
// An empty profile is auto: until it is resolved (WithProfile) the
// settings are plain Prometheus'. An explicit instanceLabel or
// metricPrefix still wins over any profile, resolved ones included.
func applyProfile(out *Settings, js jsonSettings) error {
	name := js.Profile
	if name == "" || name == ProfileAuto {
		out.AutoProfile, name = true, ProfilePrometheus
	}
	p, ok := LookupProfile(name)
	if !ok {
		return fmt.Errorf("%w: profile %q is not one of %s", ErrInvalidSettings, js.Profile, strings.Join(ProfileChoices(), ", "))
	}
	out.overrides = profileOverrides{instanceLabel: js.InstanceLabel, metricPrefix: js.MetricPrefix}
	out.setProfile(p)
	return nil
}

// WithProfile returns the settings under the named stack profile, as auto
// resolves it; the explicit instanceLabel and metricPrefix still win.
// AutoProfile is kept, and evidence (why the profile was chosen) is kept
// in ProfileEvidence for the health check.
func (s Settings) WithProfile(name, evidence string) (Settings, error) {
	p, ok := LookupProfile(name)
	if !ok {
		return s, fmt.Errorf("%w: profile %q is not one of %s", ErrInvalidSettings, name, strings.Join(ProfileNames(), ", "))
	}
	s.setProfile(p)
	s.ProfileEvidence = evidence
	return s, nil
}

// setProfile copies the profile's fields, then the explicit overrides.
func (s *Settings) setProfile(p Profile) {
	s.Profile = p.Name
	s.MetricPrefix, s.MetricPrefixes = p.Prefixes[0], append([]string(nil), p.Prefixes...)
	s.Identity = append([]string(nil), p.Identity...)
	s.Exclude, s.Gateway = p.Exclude, p.Gateway
	s.GatewayPrefixes = append([]string(nil), p.GatewayPrefixes...)
	if s.overrides.instanceLabel != "" {
		s.Identity = []string{s.overrides.instanceLabel}
	}
	s.InstanceLabel = s.Identity[len(s.Identity)-1]
	if s.overrides.metricPrefix != "" {
		s.MetricPrefix, s.MetricPrefixes = s.overrides.metricPrefix, []string{s.overrides.metricPrefix}
	}
}

// profileOverrides are the jsonData fields that win over every profile.
type profileOverrides struct{ instanceLabel, metricPrefix string }
