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
)

// Dist is a distribution of token counts. Its text form, used by flags and
// the config file, is KIND:A[,B], e.g. "lognormal:1000,0.8", "fixed:512",
// "uniform:100,2000", "exponential:250".
type Dist struct {
	Kind DistKind
	A, B float64
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
	}
	if !ok {
		return fmt.Errorf("%w: %s %s: kind must be fixed, uniform, lognormal or exponential with a mean ≥ 1 "+
			"(uniform: B ≥ A; lognormal: sigma in [0, 4])", ErrInvalidConfig, name, d)
	}
	return nil
}

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
	}
	return max(1, int(math.Min(v, 1<<30)))
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
