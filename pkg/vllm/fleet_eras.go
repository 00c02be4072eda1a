package vllm

import (
	"regexp"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Versions that predate a family: an engine whose vLLM never exported one
// of the fleet table's checked families is not "missing metrics". The
// engine's release is bounded from below by what it exports: every family
// (checked signal or evidence series) proves the engine is at least the
// release that added it in the engine's generation. A checked family it
// lacks that its generation added in a later release than that bound is
// one its vLLM predates; one added at or before the bound is missing (a
// relabelling or a disabled metric). Releases are the first of each name
// per the reference table (testdata/reference/vllm-metrics.tsv).

// FleetEvidence names the fleet table's version-evidence expression.
const FleetEvidence = "evidence"

// era is one release of a generation: the checked fleet signals and the
// evidence series (wire names without the prefix; histograms by _count)
// that release added. Evidence lists only series exported without flags;
// a family removed later still proves the engine is at least its release.
type era struct {
	release  string
	signals  []string
	evidence []string
	// labels are label evidence (EngineLabelEvidence): read from the
	// engine key, not from the evidence expression.
	labels []string
}

// EngineLabelEvidence is the exported-set key of the engine label: V1
// labels its series with engine from 0.8.3 (15dac210f), so an engine key
// with an engine proves a V1 engine is at least 0.8.3.
const EngineLabelEvidence = "label:engine"

// fleetEras are each generation's releases, oldest first.
var fleetEras = map[Generation][]era{
	GenV0: {
		{release: "0.2.3", signals: []string{FleetWaiting, FleetKVUsage}},
		{release: "0.3.1", signals: []string{FleetTTFTP99, FleetGenTokens}, evidence: []string{"e2e_request_latency_seconds_count"}},
		{release: "0.4.2", signals: []string{FleetRequests}, evidence: []string{"request_prompt_tokens_count", "request_generation_tokens_count", "request_params_n_count"}},
		{release: "0.4.3", signals: []string{FleetPreemptions}},
		{release: "0.6.4", signals: []string{FleetQueueP99}, evidence: []string{"request_inference_time_seconds_count", "request_prefill_time_seconds_count",
			"request_decode_time_seconds_count", "iteration_tokens_total_count", "request_max_num_generation_tokens_count", "request_params_max_tokens_count"}},
	},
	GenV1: {
		{release: "0.7.1", signals: []string{FleetWaiting, FleetKVUsage, FleetTTFTP99, FleetGenTokens}},
		{release: "0.7.2", signals: []string{FleetRequests}},
		{release: "0.7.3", signals: []string{FleetQueueP99}, evidence: []string{"request_inference_time_seconds_count", "request_prefill_time_seconds_count",
			"request_decode_time_seconds_count", "e2e_request_latency_seconds_count", "iteration_tokens_total_count", "gpu_prefix_cache_queries_total"}},
		{release: "0.8.0", signals: []string{FleetPreemptions}, evidence: []string{"request_params_n_count", "request_max_num_generation_tokens_count", "request_params_max_tokens_count"}},
		{release: V1EngineLabelSince, labels: []string{EngineLabelEvidence}},
		{release: "0.9.2", evidence: []string{"kv_cache_usage_perc", "prefix_cache_queries_total"}},
		{release: "0.11.0", evidence: []string{"inter_token_latency_seconds_count"}},
	},
}

// V1EngineLabelSince is the release from which V1 labels its series with
// engine (15dac210f, ≈0.8.3); an earlier V1 engine's engine cell is empty.
const V1EngineLabelSince = "0.8.3"

// FleetEvidenceSignal is, per engine, the evidence series it exports (one
// sample per name), for bounding its release (Predates).
func (b Builder) FleetEvidenceSignal(f models.Filters) SignalExpr {
	seen := map[string]bool{}
	var names []string
	for _, g := range []Generation{GenV1, GenV0} {
		for _, e := range fleetEras[g] {
			for _, n := range e.evidence {
				if !seen[n] {
					seen[n] = true
					names = append(names, regexp.QuoteMeta(n))
				}
			}
		}
	}
	m := b.matchers(f)
	if m != "" {
		m = ", " + m
	}
	sel := "{__name__=~" + quote(prefixesRegex(b.prefixes())+"("+strings.Join(names, "|")+")") + m + "}"
	return SignalExpr{FleetEvidence, agg("group", append(b.EngineLabels(), "__name__"), sel)}
}

// EvidenceName is the evidence series name of a wire name under any of
// the prefixes ("" when it has none of them).
func EvidenceName(name string, prefixes ...string) string {
	for _, p := range prefixes {
		if n, ok := strings.CutPrefix(name, p); ok {
			return n
		}
	}
	return ""
}

// Predates reports whether an engine of generation gen that exports the
// checked signals and evidence series in exported (signal names and
// evidence names) predates the checked signal, and the release of gen that
// added it. False for an unknown or mixed generation, a signal it exports,
// and a signal added at or before the newest release its series prove.
func Predates(gen Generation, signal string, exported map[string]bool) (string, bool) {
	eras, ok := fleetEras[gen]
	if !ok || exported[signal] {
		return "", false
	}
	added, newest := -1, -1
	for i, e := range eras {
		for _, s := range e.signals {
			if s == signal {
				added = i
			}
			if exported[s] {
				newest = i
			}
		}
		for _, n := range append(append([]string(nil), e.evidence...), e.labels...) {
			if exported[n] {
				newest = i
			}
		}
	}
	if added < 0 || newest < 0 || added <= newest {
		return "", false
	}
	return eras[added].release, true
}

// FleetFamily is the wire family of a checked fleet signal, for notices.
func FleetFamily(signal string) string {
	return map[string]string{
		FleetWaiting: "num_requests_waiting", FleetKVUsage: "gpu_cache_usage_perc",
		FleetPreemptions: "num_preemptions_total", FleetQueueP99: "request_queue_time_seconds",
		FleetTTFTP99: "time_to_first_token_seconds", FleetRequests: "request_success_total", FleetGenTokens: "generation_tokens_total",
	}[signal]
}
