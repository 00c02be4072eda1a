package vllm

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// set builds an exported set from names.
func set(names ...string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// TestPredates pins the rule: a checked family an engine lacks is one its
// vLLM predates only when nothing it exports was added in that release of
// its generation or later; otherwise it is missing (a relabelling or a
// disabled metric), and so is anything of an unknown or mixed generation
// or of an engine that exports no evidence at all.
func TestPredates(t *testing.T) {
	v043 := set(FleetWaiting, FleetKVUsage, FleetTTFTP99, FleetGenTokens, FleetRequests, FleetPreemptions,
		"e2e_request_latency_seconds_count", "request_prompt_tokens_count", "request_generation_tokens_count", "request_params_n_count")
	v080 := set(FleetWaiting, FleetKVUsage, FleetTTFTP99, FleetGenTokens, FleetRequests, FleetPreemptions, FleetQueueP99,
		"request_inference_time_seconds_count", "gpu_prefix_cache_queries_total", "request_params_n_count")
	v072 := set(FleetWaiting, FleetKVUsage, FleetTTFTP99, FleetGenTokens, FleetRequests)
	current := set(FleetWaiting, FleetKVUsage, FleetTTFTP99, FleetGenTokens, FleetRequests, FleetPreemptions,
		"request_inference_time_seconds_count", "kv_cache_usage_perc", "inter_token_latency_seconds_count")
	without := func(s map[string]bool, n string) map[string]bool {
		out := set()
		for k := range s {
			if k != n {
				out[k] = true
			}
		}
		return out
	}
	tests := []struct {
		name     string
		gen      Generation
		signal   string
		exported map[string]bool
		release  string
		predates bool
	}{
		{"V0 0.4.3 predates queue time (0.6.4)", GenV0, FleetQueueP99, v043, "0.6.4", true},
		{"V0 0.4.3 exports preemptions", GenV0, FleetPreemptions, v043, "", false},
		{"V0 0.6.4+ with queue time relabelled away: its 0.6.4 siblings prove the release", GenV0, FleetQueueP99,
			set(FleetWaiting, FleetPreemptions, "request_inference_time_seconds_count"), "", false},
		{"V0 without preemptions but with request_params_n (0.4.2) is 0.4.2", GenV0, FleetPreemptions,
			without(v043, FleetPreemptions), "0.4.3", true},
		{"V0 without preemptions but with a 0.6.4 family: missing", GenV0, FleetPreemptions,
			set(FleetWaiting, "iteration_tokens_total_count"), "", false},
		{"V1 0.7.2 predates queue time (0.7.3)", GenV1, FleetQueueP99, v072, "0.7.3", true},
		{"V1 0.7.2 predates preemptions (0.8.0)", GenV1, FleetPreemptions, v072, "0.8.0", true},
		{"V1 0.8.0 exports every checked family", GenV1, FleetPreemptions, v080, "", false},
		{"current V1 with queue time relabelled away: missing", GenV1, FleetQueueP99, without(current, FleetQueueP99), "", false},
		{"current V1 with preemptions disabled: missing", GenV1, FleetPreemptions, without(current, FleetPreemptions), "", false},
		{"an engine proved newer than the release that added the family: missing", GenV1, FleetRequests, set(FleetWaiting, "e2e_request_latency_seconds_count"), "", false},
		{"V1 with an engine label is 0.8.3 or later: missing", GenV1, FleetPreemptions, set(FleetWaiting, EngineLabelEvidence), "", false},
		{"V1 without it and without 0.8.0 families predates preemptions", GenV1, FleetPreemptions, set(FleetWaiting, FleetQueueP99), "0.8.0", true},
		{"unknown generation: missing", GenUnknown, FleetQueueP99, v043, "", false},
		{"mixed generation: missing", GenMixed, FleetQueueP99, v043, "", false},
		{"no evidence at all: missing", GenV0, FleetQueueP99, set(), "", false},
		{"a signal outside the checked set", GenV0, FleetRunning, v043, "", false},
		{"a signal outside the checked set, from an engine proved only of the first release", GenV0, FleetRunning, set(FleetWaiting), "", false},
		{"V0 proved only of its first release (0.2.3) predates queue time", GenV0, FleetQueueP99, set(FleetWaiting, FleetKVUsage), "0.6.4", true},
		{"V1 proved only of its first release (0.7.1) predates requests (0.7.2)", GenV1, FleetRequests, set(FleetWaiting, FleetTTFTP99), "0.7.2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, ok := Predates(tt.gen, tt.signal, tt.exported)
			require.Equal(t, tt.predates, ok)
			require.Equal(t, tt.release, rel)
		})
	}
}

// TestFleetErasMatchCatalogue: each checked signal's era is the first
// release the catalogue's Versions line gives for its family in that
// generation, so the notice names the release the reference table does.
func TestFleetErasMatchCatalogue(t *testing.T) {
	keys := map[string]SignalKey{FleetWaiting: Waiting, FleetPreemptions: Preemptions, FleetQueueP99: QueueTime,
		FleetTTFTP99: TTFT, FleetRequests: RequestSuccess}
	for gen, eras := range fleetEras {
		for _, e := range eras {
			for _, s := range e.signals {
				key, ok := keys[s]
				if !ok {
					continue
				}
				sig, _ := Lookup(key)
				require.Contains(t, sig.Versions, string(gen)+" from "+e.release, "%s in %s", s, gen)
			}
		}
	}
}

// TestFleetEvidenceSignal: one grouped selector over every evidence series
// by engine and name, with the query's filters.
func TestFleetEvidenceSignal(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	s := b.FleetEvidenceSignal(models.Filters{Models: []string{"m"}})
	require.Equal(t, FleetEvidence, s.Name)
	require.Contains(t, s.Expr, `group by (instance, engine, model_name, __name__) ({__name__=~"vllm:(`)
	require.Contains(t, s.Expr, "request_params_max_tokens_count")
	require.Contains(t, s.Expr, `model_name="m"`)
	require.Equal(t, "request_params_n_count", EvidenceName("vllm:request_params_n_count", "kserve_vllm:", "vllm:"))
	require.Equal(t, "", EvidenceName("other_metric", "vllm:"))
}

// TestFleetEvidenceSignalParses: the evidence selector is valid PromQL with
// and without filters, the filters joined to the name matcher by a comma.
func TestFleetEvidenceSignalParses(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		name   string
		f      models.Filters
		suffix string
	}{
		{"no filters", models.Filters{}, `)"})`},
		{"a model", models.Filters{Models: []string{"m"}}, `)", model_name="m"})`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := b.FleetEvidenceSignal(tt.f).Expr
			_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
			require.NoError(t, err, e)
			require.True(t, strings.HasSuffix(e, tt.suffix), e)
		})
	}
}
