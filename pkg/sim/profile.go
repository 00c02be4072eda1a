package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

// ProfileKind names a load profile.
type ProfileKind string

// Load profile kinds.
const (
	Steady ProfileKind = "steady" // factor 1
	Ramp   ProfileKind = "ramp"   // From → To linearly over Over, then To
	Bursts ProfileKind = "bursts" // Factor for Length at the start of every Period, else 1
	Step   ProfileKind = "step"   // 1 before At, Factor from At on
	Sine   ProfileKind = "sine"   // 1 + Amplitude·sin(2πt/Period), a diurnal-like swing
	// Trace replays measured factors: Factors[i] for the i-th Period,
	// repeating from the first after the last. It has no text form: a
	// capacity twin builds it from a fleet's arrival history.
	Trace ProfileKind = "trace"
)

// Profile multiplies an engine's arrival rate by a factor that depends on
// simulated time since the fleet started. Its text form is KIND[:key=value,...]:
//
//	steady
//	ramp:from=0.2,to=2,over=30m
//	bursts:period=10m,length=1m,factor=4
//	step:at=5m,factor=3
//	sine:period=1h,amplitude=0.5
type Profile struct {
	Kind      ProfileKind
	From, To  float64       // ramp
	Over      time.Duration // ramp
	Period    time.Duration // bursts, sine
	Length    time.Duration // bursts
	Factor    float64       // bursts, step
	At        time.Duration // step
	Amplitude float64       // sine, in [0, 1]
	Factors   []float64     // trace: one factor per Period
}

// ParseProfile parses the text form of a Profile.
func ParseProfile(s string) (Profile, error) {
	var p Profile
	err := p.UnmarshalText([]byte(s))
	return p, err
}

// factor returns the rate multiplier at simulated time t.
func (p Profile) factor(t time.Duration) float64 {
	switch p.Kind {
	case Ramp:
		if t >= p.Over {
			return p.To
		}
		return p.From + (p.To-p.From)*float64(t)/float64(p.Over)
	case Bursts:
		if t%p.Period < p.Length {
			return p.Factor
		}
		return 1
	case Step:
		if t >= p.At {
			return p.Factor
		}
		return 1
	case Sine:
		return 1 + p.Amplitude*math.Sin(2*math.Pi*float64(t)/float64(p.Period))
	case Trace:
		return p.Factors[int(t/p.Period)%len(p.Factors)]
	default:
		return 1
	}
}

// peak bounds factor from above; arrivals are drawn by thinning a Poisson
// process of rate peak·base, which is exact for any shape.
func (p Profile) peak() float64 {
	switch p.Kind {
	case Ramp:
		return math.Max(p.From, p.To)
	case Bursts, Step:
		return math.Max(1, p.Factor)
	case Sine:
		return 1 + p.Amplitude
	case Trace:
		return slices.Max(p.Factors)
	default:
		return 1
	}
}

func (p Profile) validate() error {
	ok := true
	switch p.Kind {
	case Steady:
	case Ramp:
		ok = p.From >= 0 && p.To >= 0 && p.Over > 0
	case Bursts:
		ok = p.Period > 0 && p.Length > 0 && p.Length <= p.Period && p.Factor >= 0
	case Step:
		ok = p.At >= 0 && p.Factor >= 0
	case Sine:
		ok = p.Period > 0 && p.Amplitude >= 0 && p.Amplitude <= 1
	case Trace:
		ok = p.Period > 0 && len(p.Factors) > 0 && slices.Min(p.Factors) >= 0 && slices.Max(p.Factors) > 0
	default:
		ok = false
	}
	if !ok {
		return fmt.Errorf("%w: profile %q: want steady, ramp:from=F,to=F,over=D, bursts:period=D,length=D,factor=F "+
			"(length ≤ period), step:at=D,factor=F or sine:period=D,amplitude=F (≤ 1); factors ≥ 0, durations > 0 "+
			"(a trace, set in Go only, needs a period and a factor above 0)",
			ErrInvalidConfig, p.String())
	}
	return nil
}

// String returns the text form.
func (p Profile) String() string {
	switch p.Kind {
	case Ramp:
		return fmt.Sprintf("ramp:from=%s,to=%s,over=%s", fmtNum(p.From), fmtNum(p.To), interval.Compact(p.Over))
	case Bursts:
		return fmt.Sprintf("bursts:period=%s,length=%s,factor=%s", interval.Compact(p.Period), interval.Compact(p.Length), fmtNum(p.Factor))
	case Step:
		return fmt.Sprintf("step:at=%s,factor=%s", interval.Compact(p.At), fmtNum(p.Factor))
	case Sine:
		return fmt.Sprintf("sine:period=%s,amplitude=%s", interval.Compact(p.Period), fmtNum(p.Amplitude))
	case Trace:
		return fmt.Sprintf("trace:period=%s,factors=%d", interval.Compact(p.Period), len(p.Factors))
	default:
		return string(p.Kind)
	}
}

// MarshalText implements encoding.TextMarshaler.
func (p Profile) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Profile) UnmarshalText(b []byte) error {
	kind, args, _ := strings.Cut(string(b), ":")
	np := Profile{Kind: ProfileKind(kind)}
	if args != "" {
		for _, kv := range strings.Split(args, ",") {
			if err := np.set(kv); err != nil {
				return fmt.Errorf("%w: profile %q: %w", ErrInvalidConfig, string(b), err)
			}
		}
	}
	if err := np.validate(); err != nil {
		return err
	}
	*p = np
	return nil
}

// set assigns one key=value pair of the text form.
func (p *Profile) set(kv string) error {
	k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
	durations := map[string]*time.Duration{"over": &p.Over, "period": &p.Period, "length": &p.Length, "at": &p.At}
	floats := map[string]*float64{"from": &p.From, "to": &p.To, "factor": &p.Factor, "amplitude": &p.Amplitude}
	if d, ok := durations[k]; ok {
		parsed, err := time.ParseDuration(v)
		*d = parsed
		return err
	}
	if f, ok := floats[k]; ok {
		parsed, err := strconv.ParseFloat(v, 64)
		*f = parsed
		return err
	}
	return fmt.Errorf("unknown key %q", k)
}
