package twin

import (
	"fmt"
	"math"
	"sort"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

// Bucket is one cumulative histogram bucket as the store answers it:
// requests with a value at or under Le (+Inf for the last).
type Bucket struct {
	Le    float64
	Count float64
}

// Lengths turns a token histogram (vllm:request_prompt_tokens or
// request_generation_tokens, increased over the range) into the twin's
// distribution: each finite bucket drawn by its share of the requests,
// and within a bucket from a log-normal fitted to the histogram (its
// median read from the buckets, its spread from the family's exact mean,
// the _sum over the _count; 0 or NaN when unknown, then from the
// quartiles), cut to the bucket. What lies over the last finite bound
// (vLLM's token buckets end at max_model_len, so little does) is drawn
// from one more bucket as wide again.
func Lengths(buckets []Bucket, mean float64) (sim.Dist, error) {
	bounds, weights := shares(buckets)
	d := sim.Dist{Kind: sim.Empirical, Bounds: bounds, Weights: weights}
	if !validWeights(weights) {
		return d, fmt.Errorf("twin: the token histogram holds no finished request over the range")
	}
	d.A, d.B = logNormalFit(d, mean)
	return d, nil
}

// shares are the histogram's finite buckets and each one's requests.
func shares(buckets []Bucket) (bounds, weights []float64) {
	bs := append([]Bucket(nil), buckets...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Le < bs[j].Le })
	prev := 0.0
	for _, b := range bs {
		w := math.Max(0, b.Count-prev)
		prev = math.Max(prev, b.Count)
		le := b.Le
		if math.IsInf(le, 1) {
			if len(bounds) == 0 || w == 0 {
				continue
			}
			le = 2 * bounds[len(bounds)-1]
		}
		if le < 1 {
			continue // a bound under one token holds no request
		}
		bounds, weights = append(bounds, le), append(weights, w)
	}
	return bounds, weights
}

// logNormalFit is the log-space mean and sigma of a log-normal with the
// histogram's median and the given mean (a log-normal's mean is its
// median times e^(σ²/2)), or its quartiles' spread when the mean is
// unknown or not above the median.
func logNormalFit(d sim.Dist, mean float64) (mu, sigma float64) {
	med := logQuantile(d, 0.5)
	mu = math.Log(med)
	if finite(mean) && mean > med {
		sigma = math.Sqrt(2 * math.Log(mean/med))
	} else {
		sigma = (math.Log(logQuantile(d, 0.75)) - math.Log(logQuantile(d, 0.25))) / 1.349
	}
	return mu, math.Min(3, math.Max(0.05, sigma))
}

// logQuantile is the q-quantile of the buckets, interpolated in the
// logarithm within its bucket (from 1 for the first).
func logQuantile(d sim.Dist, q float64) float64 {
	total := 0.0
	for _, w := range d.Weights {
		total += w
	}
	rank, below := q*total, 0.0
	for i, w := range d.Weights {
		if below+w < rank || w == 0 {
			below += w
			continue
		}
		lo := 1.0
		if i > 0 {
			lo = d.Bounds[i-1]
		}
		hi := math.Max(d.Bounds[i], lo)
		return lo * math.Pow(hi/lo, (rank-below)/w)
	}
	return d.Bounds[len(d.Bounds)-1]
}

func validWeights(ws []float64) bool {
	for _, w := range ws {
		if w > 0 {
			return true
		}
	}
	return false
}
