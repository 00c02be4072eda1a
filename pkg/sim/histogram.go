package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Bucket boundaries, copied from vLLM (newest lists; see the metric
// catalogue). They are shared, never modified.
var (
	// TTFT, V0 and V1 since 86fc2321f (≈v0.8.4).
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	// Inter-token latency, V0 time_per_output_token and per-request TPOT.
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
		20.0, 40.0, 80.0}
	// Queue, e2e, prefill, decode and inference time.
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
		60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	// iteration_tokens_total: V1 since 4213475ec; V0 kept its 8096 typo.
	iterationTokensV1 = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	iterationTokensV0 = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8096}
	paramsNBuckets    = []float64{1, 2, 5, 10, 20}
	// request_num_preemptions (vllm/v1/metrics/buckets.py): le=1 holds the
	// never-preempted requests too, as every finished request is observed.
	numPreemptionsBuckets = []float64{1, 2, 3, 4, 5, 10, 20}
	// NIXL transfers (vllm/distributed/kv_transfer/kv_connector/v1/nixl/stats.py):
	// the post-time list, the same without its first bound for transfer
	// time, 2**(10+i) for odd i in [1, 25) bytes, and descriptor counts.
	nixlPostBuckets  = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	nixlXferBuckets  = nixlPostBuckets[1:]
	nixlBytesBuckets = powersOfTwo(11, 33, 2)
	nixlDescBuckets  = []float64{10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000}
)

// powersOfTwo lists 2^from, 2^(from+step), … up to 2^to.
func powersOfTwo(from, to, step int) []float64 {
	var out []float64
	for e := from; e <= to; e += step {
		out = append(out, math.Ldexp(1, e))
	}
	return out
}

// buckets125 mirrors vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50, …
// while the value is ≤ max. Token-count histograms use it with
// max_model_len, so their le set differs per deployment.
func buckets125(max int) []float64 {
	var out []float64
	for scale := 1; ; scale *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*scale > max {
				return out
			}
			out = append(out, float64(m*scale))
		}
	}
}

// histogram is a classic Prometheus histogram kept by one engine. It is
// not safe for concurrent use; the engine's mutex guards it.
type histogram struct {
	bounds []float64 // upper bounds, ascending, +Inf implied
	counts []uint64  // per bucket, not cumulative; last is +Inf
	sum    float64
	count  uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe adds v to the first bucket whose upper bound is ≥ v, which is
// Prometheus's le ("less or equal") rule.
func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)]++
	h.sum += v
	h.count++
}

// histogramFamilyPrefix is the prefix HistogramBuckets keys leave out.
const histogramFamilyPrefix = "vllm:"

// histogramFamilyNames lists the keys HistogramBuckets accepts: the
// histogram families of both generations, without the "vllm:" prefix.
func histogramFamilyNames() map[string]bool {
	names := map[string]bool{}
	for _, fams := range [][]family{v1Families, v0Families, nixlFamilies(), release032Families(), {requestPriorityFamily()}} {
		for _, f := range fams {
			if f.hist != nil {
				names[strings.TrimPrefix(f.name, histogramFamilyPrefix)] = true
			}
		}
	}
	return names
}

// validateBuckets checks custom bucket lists: known family, at least one
// bound, finite and strictly ascending.
func validateBuckets(custom map[string][]float64) error {
	known := histogramFamilyNames()
	for name, bounds := range custom {
		if !known[name] {
			return fmt.Errorf("%w: histogram_buckets: %q is not a histogram family (give the name without %q)",
				ErrInvalidConfig, name, histogramFamilyPrefix)
		}
		if len(bounds) == 0 {
			return fmt.Errorf("%w: histogram_buckets: %s has no bounds", ErrInvalidConfig, name)
		}
		for i, b := range bounds {
			if math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= bounds[i-1]) {
				return fmt.Errorf("%w: histogram_buckets: %s bounds must be finite and strictly ascending (+Inf is implied)",
					ErrInvalidConfig, name)
			}
		}
	}
	return nil
}

// applyBuckets replaces the histograms of e that custom names with empty
// ones using the custom bounds. It runs before the engine observes anything.
func applyBuckets(e *engine, fams []family, custom map[string][]float64) {
	for _, f := range fams {
		if f.hist == nil {
			continue
		}
		if bounds, ok := custom[strings.TrimPrefix(f.name, histogramFamilyPrefix)]; ok {
			*f.hist(e) = newHistogram(slices.Clone(bounds))
		}
	}
}

// QueueTimeBounds and TTFTBounds are the upper bounds of vLLM's
// request_queue_time_seconds and time_to_first_token_seconds buckets (a
// copy): a twin reads its p99s through them as a store's
// histogram_quantile would.
func QueueTimeBounds() []float64 { return slices.Clone(requestLatencyBuckets) }

// TTFTBounds: see QueueTimeBounds.
func TTFTBounds() []float64 { return slices.Clone(ttftBuckets) }
