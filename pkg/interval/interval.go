package interval

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

const (
	// MaxPoints is the most points per series Prometheus accepts for a range
	// query, and the most Compute ever asks for.
	MaxPoints = 11000
	// DefaultMaxDataPoints is used when a query's MaxDataPoints is 0.
	DefaultMaxDataPoints = 1500
	// DefaultScrape is the scrape interval assumed when none is configured.
	DefaultScrape = 15 * time.Second
	// MaxRange is the longest time range Compute accepts (about 146 years),
	// so that every duration it derives fits in a time.Duration.
	MaxRange = time.Duration(math.MaxInt64 / 2)
)

const maxDuration = time.Duration(math.MaxInt64)

// ErrInvalidRequest marks every error Compute returns: each one is caused
// by the request (its time range, max data points or min step), not by this
// package, so callers classify it as invalid input. Test for it with
// errors.Is; the marked error's message is the cause's alone.
var ErrInvalidRequest = errors.New("invalid request")

// requestError is an error marked with ErrInvalidRequest. It is a type
// rather than fmt.Errorf("%w: %w", ...) so that the message users see stays
// the cause's, without a prefix.
type requestError struct {
	err error
}

func (e requestError) Error() string { return e.err.Error() }

// Unwrap returns both the marker and the cause, for errors.Is and errors.As.
func (e requestError) Unwrap() []error { return []error{ErrInvalidRequest, e.err} }

// Input is what Compute needs from a query and the data source settings.
type Input struct {
	// From and To are the query's time range.
	From, To time.Time
	// MaxDataPoints is the query's max data points; 0 means
	// DefaultMaxDataPoints and a negative value is an error.
	MaxDataPoints int64
	// IntervalMs is the frontend's $__interval in milliseconds, from
	// backend.DataQuery.Interval; 0 (or negative) means unset.
	IntervalMs int64
	// QueryInterval is the query's own min-step string, e.g. "2m", "", "0s",
	// "$__rate_interval" or "${__interval}". A variable counts as unset,
	// except that $__rate_interval also switches on the rate-interval rule.
	QueryInterval string
	// Scrape is the data source's scrape interval; 0 (or negative) means
	// DefaultScrape.
	Scrape time.Duration
}

// Result is the step and the built-in variable values for one query.
type Result struct {
	// Step is the Prometheus query step.
	Step time.Duration
	// Start and End are From and To aligned down to multiples of Step
	// (counted from the Unix epoch).
	Start, End time.Time
	// Interval is the value of $__interval (equal to Step).
	Interval time.Duration
	// RateInterval is the value of $__rate_interval.
	RateInterval time.Duration
	// Range is To − From, the value of $__range.
	Range time.Duration
	// Clamped is true when the MaxPoints limit raised the step above what
	// Grafana's rules give; callers should turn it into a frame notice.
	Clamped bool
}

// Points returns how many samples per series a range query from Start to End
// at Step returns.
func (r Result) Points() int64 {
	return pointCount(r.Start, r.End, r.Step)
}

// minStepKind classifies Input.QueryInterval.
type minStepKind int

const (
	minStepUnset        minStepKind = iota // "", "0s", a zero duration, or a variable other than the two below
	minStepFixed                           // a positive duration such as "2m"
	minStepInterval                        // $__interval or ${__interval}
	minStepRateInterval                    // $__rate_interval or ${__rate_interval}
)

// minStep is the parsed Input.QueryInterval.
type minStep struct {
	kind  minStepKind
	value time.Duration // the parsed duration when kind is minStepFixed
}

// Compute returns the step, aligned range and variable values for in,
// following Grafana's Prometheus data source (see the package comment). Every
// error it returns is caused by the request, and is marked with
// ErrInvalidRequest.
func Compute(in Input) (Result, error) {
	rng, err := validate(in)
	if err != nil {
		return Result{}, requestError{err}
	}
	ms, err := parseMinStep(in.QueryInterval)
	if err != nil {
		return Result{}, requestError{err}
	}
	scrape := scrapeOrDefault(in.Scrape)
	queryInterval := intervalMsDuration(in.IntervalMs)

	step := ruleStep(rng, minInterval(ms, queryInterval, scrape), in.MaxDataPoints)
	if ms.kind == minStepRateInterval {
		step = rateInterval(step, scrape)
	}
	step, clamped := clampStep(in.From, in.To, step)

	return Result{
		Step:         step,
		Start:        alignDown(in.From, step),
		End:          alignDown(in.To, step),
		Interval:     step,
		RateInterval: rateIntervalValue(ms, step, queryInterval, scrape),
		Range:        rng,
		Clamped:      clamped,
	}, nil
}

// validate checks the parts of in that do not need parsing and returns the
// range.
func validate(in Input) (time.Duration, error) {
	if in.To.Before(in.From) {
		return 0, fmt.Errorf("invalid time range: to (%s) is before from (%s)",
			in.To.Format(time.RFC3339), in.From.Format(time.RFC3339))
	}
	if in.MaxDataPoints < 0 {
		return 0, fmt.Errorf("invalid maxDataPoints %d: must be 0 (default %d) or positive",
			in.MaxDataPoints, DefaultMaxDataPoints)
	}
	rng := in.To.Sub(in.From)
	if rng > MaxRange {
		return 0, fmt.Errorf("time range from %s to %s is too long: at most %.0f years",
			in.From.Format(time.RFC3339), in.To.Format(time.RFC3339), MaxRange.Hours()/24/365)
	}
	return rng, nil
}

// parseMinStep classifies and parses the query's min-step string. Zero
// durations count as unset, like "0s"; negative ones are an error.
func parseMinStep(s string) (minStep, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "$__rate_interval" || s == "${__rate_interval}":
		return minStep{kind: minStepRateInterval}, nil
	case s == "$__interval" || s == "${__interval}":
		return minStep{kind: minStepInterval}, nil
	case s == "" || s == "0s" || isVariable(s):
		return minStep{kind: minStepUnset}, nil
	}
	d, err := Parse(s)
	if err != nil {
		return minStep{}, invalidIntervalError(s, err)
	}
	if d < 0 {
		return minStep{}, invalidIntervalError(s, errors.New("must not be negative"))
	}
	if d == 0 {
		return minStep{kind: minStepUnset}, nil
	}
	return minStep{kind: minStepFixed, value: d}, nil
}

// isVariable reports whether a min-step string is a template variable.
func isVariable(s string) bool {
	return strings.HasPrefix(s, "$") || strings.HasPrefix(s, "[[")
}

func invalidIntervalError(value string, cause error) error {
	return fmt.Errorf("invalid interval %q (the query's min step): %w; "+
		`use a duration such as "30s", "2m", "1h" or "1d", or "$__rate_interval"`, value, cause)
}

func scrapeOrDefault(scrape time.Duration) time.Duration {
	if scrape <= 0 {
		return DefaultScrape
	}
	return scrape
}

// intervalMsDuration converts the frontend's interval to a duration,
// treating negative values as unset and saturating huge ones.
func intervalMsDuration(ms int64) time.Duration {
	switch {
	case ms <= 0:
		return 0
	case ms > int64(maxDuration/time.Millisecond):
		return maxDuration / time.Millisecond * time.Millisecond
	default:
		return time.Duration(ms) * time.Millisecond
	}
}

// minInterval is Grafana's rule 1 (gtime.GetIntervalFrom, given the scrape
// interval as the data source's interval): the query's min step when set,
// else the frontend's interval when set, else the scrape interval (which
// scrapeOrDefault has already defaulted to 15s).
func minInterval(ms minStep, queryInterval, scrape time.Duration) time.Duration {
	switch {
	case ms.kind == minStepFixed:
		return ms.value
	case queryInterval > 0:
		return queryInterval
	default:
		return scrape
	}
}

// ruleStep applies Grafana's rules 2–4: the min interval or the rounded
// range/maxDataPoints, whichever is larger, but never below the rounded safe
// interval range/MaxPoints.
func ruleStep(rng, floor time.Duration, maxDataPoints int64) time.Duration {
	if maxDataPoints == 0 {
		maxDataPoints = DefaultMaxDataPoints
	}
	calculated := max(floor, Round(rng/time.Duration(maxDataPoints)))
	safe := Round(rng / MaxPoints)
	return max(calculated, safe)
}

// rateInterval is Grafana's $__rate_interval rule: max(i + scrape, 4 × scrape),
// saturating instead of overflowing.
func rateInterval(i, scrape time.Duration) time.Duration {
	return max(addSat(i, scrape), mulSat(scrape, 4))
}

// rateIntervalValue returns $__rate_interval: the step when the min step was
// $__rate_interval, otherwise rateInterval(query interval, min step), where
// the min step is the step for $__interval, the parsed duration when fixed,
// and the scrape interval when unset.
func rateIntervalValue(ms minStep, step, queryInterval, scrape time.Duration) time.Duration {
	switch ms.kind {
	case minStepRateInterval:
		return step
	case minStepInterval:
		return rateInterval(queryInterval, step)
	case minStepFixed:
		return rateInterval(queryInterval, ms.value)
	default:
		return rateInterval(queryInterval, scrape)
	}
}

// clampStep raises step when the aligned range would hold more than
// MaxPoints points. Any step S ≥ range/(MaxPoints−1) is enough: aligning moves
// start down by less than S and end down by at least 0, so the aligned span
// is below range + S and holds at most ⌊range/S⌋ + 1 + 1 ≤ MaxPoints points.
func clampStep(from, to time.Time, step time.Duration) (time.Duration, bool) {
	if pointCount(alignDown(from, step), alignDown(to, step), step) <= MaxPoints {
		return step, false
	}
	rng := to.Sub(from)
	return roundUp(ceilDiv(rng, MaxPoints-1)), true
}

// pointCount is the number of samples from start to end inclusive at step.
func pointCount(start, end time.Time, step time.Duration) int64 {
	return int64(end.Sub(start)/step) + 1
}

// roundUp rounds a raised step up to whole seconds (or milliseconds when
// below a second) so that it reads well in the query inspector.
func roundUp(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return ceilDiv(d, time.Second) * time.Second
	case d >= time.Millisecond:
		return ceilDiv(d, time.Millisecond) * time.Millisecond
	default:
		return d
	}
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0 and b > 0.
func ceilDiv(a, b time.Duration) time.Duration {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// alignDown returns t rounded down to a multiple of step counted from the
// Unix epoch (as Prometheus and Grafana align), without overflowing for any
// t: the remainder of sec·10⁹ + nsec modulo step is taken in 128 bits.
func alignDown(t time.Time, step time.Duration) time.Time {
	s := uint64(step)
	sec := t.Unix() % int64(step)
	if sec < 0 {
		sec += int64(step)
	}
	hi, lo := bits.Mul64(uint64(sec), uint64(time.Second)%s)
	lo, carry := bits.Add64(lo, uint64(t.Nanosecond()), 0)
	hi += carry
	rem := bits.Rem64(hi, lo, s)
	return t.Add(-time.Duration(rem))
}

func addSat(a, b time.Duration) time.Duration {
	if a > 0 && b > maxDuration-a {
		return maxDuration
	}
	return a + b
}

func mulSat(a time.Duration, n int64) time.Duration {
	if a > maxDuration/time.Duration(n) {
		return maxDuration
	}
	return a * time.Duration(n)
}
