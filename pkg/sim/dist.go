package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// DistKind names a token-count distribution.
type DistKind string

// Distribution kinds. Their parameters A and B mean:
const (
	Fixed       DistKind = "fixed"       // always A
	Uniform     DistKind = "uniform"     // uniform in [A, B]
	LogNormal   DistKind = "lognormal"   // log-normal with mean A and log-space sigma B
	Exponential DistKind = "exponential" // exponential with mean A
	// Empirical draws from a histogram: a bucket with probability
	// proportional to its Weights entry, then a value within it (above
	// the bound below it, 0 for the first, up to its Bounds entry): from a
	// log-normal of log-space mean A and sigma B cut to the bucket when B
	// > 0, else uniform in the logarithm. It has no text form: a capacity
	// twin builds it from the token histograms a store holds.
	Empirical DistKind = "empirical"
)

// Dist is a distribution of token counts. Its text form, used by flags and
// the config file, is KIND:A[,B], e.g. "lognormal:1000,0.8", "fixed:512",
// "uniform:100,2000", "exponential:250".
type Dist struct {
	Kind DistKind
	A, B float64
	// Bounds and Weights are an empirical distribution's buckets:
	// finite, ascending upper bounds and each bucket's share.
	Bounds, Weights []float64
}

// ParseDist parses the text form of a Dist.
func ParseDist(s string) (Dist, error) {
	var d Dist
	err := d.UnmarshalText([]byte(s))
	return d, err
}

// String returns the text form.
func (d Dist) String() string {
	switch d.Kind {
	case Fixed, Exponential:
		return fmt.Sprintf("%s:%s", d.Kind, fmtNum(d.A))
	case Empirical:
		return fmt.Sprintf("%s:%d buckets", d.Kind, len(d.Bounds))
	default:
		return fmt.Sprintf("%s:%s,%s", d.Kind, fmtNum(d.A), fmtNum(d.B))
	}
}

// MarshalText implements encoding.TextMarshaler.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Dist) UnmarshalText(b []byte) error {
	kind, args, _ := strings.Cut(string(b), ":")
	nums, err := parseNums(args)
	if err != nil {
		return fmt.Errorf("%w: distribution %q: %w", ErrInvalidConfig, string(b), err)
	}
	want := 2
	if k := DistKind(kind); k == Fixed || k == Exponential {
		want = 1
	}
	if len(nums) != want {
		return fmt.Errorf("%w: distribution %q: want KIND:A,B for uniform and lognormal, KIND:A for fixed and exponential",
			ErrInvalidConfig, string(b))
	}
	nd := Dist{Kind: DistKind(kind), A: nums[0]}
	if want == 2 {
		nd.B = nums[1]
	}
	if err := nd.validate("distribution"); err != nil {
		return err
	}
	*d = nd
	return nil
}

func parseNums(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (d Dist) validate(name string) error {
	ok := false
	switch d.Kind {
	case Fixed, Exponential:
		ok = d.A >= 1
	case Uniform:
		ok = d.A >= 1 && d.B >= d.A
	case LogNormal:
		ok = d.A >= 1 && d.B >= 0 && d.B <= 4
	case Empirical:
		ok = validEmpirical(d.Bounds, d.Weights) && d.B >= 0 && !math.IsNaN(d.A) && !math.IsInf(d.A, 0) && !math.IsInf(d.B, 0)
	}
	if !ok {
		return fmt.Errorf("%w: %s %s: kind must be fixed, uniform, lognormal or exponential with a mean ≥ 1 "+
			"(uniform: B ≥ A; lognormal: sigma in [0, 4]; empirical, set in Go only: ascending bounds ≥ 1, "+
			"as many weights ≥ 0, one above 0)", ErrInvalidConfig, name, d)
	}
	return nil
}

// Sample draws one token count, at least 1, as an engine draws a
// request's; a twin's tests check its distributions with it.
func (d Dist) Sample(r *rand.Rand) int { return d.sample(r) }

// Validate reports whether d is a distribution the simulator accepts.
func (d Dist) Validate() error { return d.validate("distribution") }

// sample draws one token count, at least 1.
func (d Dist) sample(r *rand.Rand) int {
	var v float64
	switch d.Kind {
	case Fixed:
		v = d.A
	case Uniform:
		v = d.A + r.Float64()*(d.B-d.A+1)
	case LogNormal:
		// mu is chosen so that the mean, not the median, equals A.
		mu := math.Log(d.A) - d.B*d.B/2
		v = math.Exp(mu + d.B*r.NormFloat64())
	case Exponential:
		v = d.A * r.ExpFloat64()
	case Empirical:
		v = d.sampleEmpirical(r)
	}
	return max(1, int(math.Min(v, 1<<30)))
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// withinBucket draws a token count in lo+1..hi: a value in [lo, hi)
// floored, plus one.
func (d Dist) withinBucket(r *rand.Rand, lo, hi float64) float64 {
	switch {
	case d.B > 0:
		// The log-normal cut to [lo, hi): its CDF's values there, a uniform
		// draw between them, mapped back.
		cdf := func(x float64) float64 {
			if x <= 0 {
				return 0
			}
			return 0.5 * math.Erfc(-(math.Log(x)-d.A)/(d.B*math.Sqrt2))
		}
		a, b := cdf(lo), cdf(hi)
		if b-a > 1e-12 {
			u := a + r.Float64()*(b-a)
			v := math.Exp(d.A + d.B*math.Sqrt2*math.Erfinv(2*u-1))
			return math.Floor(math.Min(math.Max(v, lo), math.Nextafter(hi, lo))) + 1
		}
	case lo == 0:
		return math.Floor(r.Float64()*hi) + 1
	}
	if lo < 1 {
		lo = 1
	}
	return math.Floor(lo*math.Pow(hi/lo, r.Float64())) + 1
}

// validEmpirical: as many weights as bounds, bounds ascending from 1,
// weights not negative and not all zero.
func validEmpirical(bounds, weights []float64) bool {
	if len(bounds) == 0 || len(bounds) != len(weights) || bounds[0] < 1 {
		return false
	}
	total := 0.0
	for i, w := range weights {
		if w < 0 || math.IsNaN(w) || (i > 0 && bounds[i] <= bounds[i-1]) || math.IsInf(bounds[i], 0) {
			return false
		}
		total += w
	}
	return total > 0
}

// sampleEmpirical picks a bucket by weight, then a value within it.
// Token counts spread over orders of magnitude and vLLM's buckets grow by
// steps of 2 to 2.5, so the shape inside a bucket matters: a linear draw
// overstates a log-normal's mean by about 10%, one uniform in the
// logarithm by 2–5% and lets a wide last bucket hold too many long
// requests; a log-normal fitted to the buckets, cut to each, keeps the
// histogram's masses and the tail's slope.
func (d Dist) sampleEmpirical(r *rand.Rand) float64 {
	total := 0.0
	for _, w := range d.Weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range d.Weights {
		if x < w || i == len(d.Weights)-1 {
			lo := 0.0
			if i > 0 {
				lo = d.Bounds[i-1]
			}
			return d.withinBucket(r, lo, d.Bounds[i])
		}
		x -= w
	}
	return d.Bounds[len(d.Bounds)-1]
}
