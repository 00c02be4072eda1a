package gtimeparity_test

import (
	"math"
	quickrand "math/rand" // quick.Config's type; the inputs come from math/rand/v2
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/gtime"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

const (
	day  = 24 * time.Hour
	year = 365 * day
)

// seed makes the random inputs the same on every run, so that a failure
// can be replayed.
const seed = 20250601

// roundBounds are the edges of Grafana's rounding table, each of which the
// tests probe at, just below and just above.
var roundBounds = []time.Duration{
	0, 10 * time.Millisecond, 15 * time.Millisecond, 35 * time.Millisecond, 75 * time.Millisecond,
	150 * time.Millisecond, 350 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond,
	3500 * time.Millisecond, 7500 * time.Millisecond, 12500 * time.Millisecond, 17500 * time.Millisecond,
	25 * time.Second, 45 * time.Second, 90 * time.Second, 210 * time.Second, 450 * time.Second,
	750 * time.Second, 1050 * time.Second, 25 * time.Minute, 45 * time.Minute, 90 * time.Minute,
	150 * time.Minute, 270 * time.Minute, 9 * time.Hour, day, 2 * day, 7 * day, 21 * day, 2 * year,
}

// edgeDurations are the table's edges ±1ns and ±1ms, the unit sizes, and
// the extremes of a Duration.
func edgeDurations() []time.Duration {
	out := []time.Duration{math.MinInt64, math.MaxInt64, -1, 1, 30 * day, year, 400 * 24 * time.Hour}
	for _, b := range roundBounds {
		out = append(out, b-time.Millisecond, b-1, b, b+1, b+time.Millisecond)
	}
	return out
}

// logUniform returns a duration spread evenly over the orders of magnitude
// from 1ns to the largest Duration, negative one time in twenty.
func logUniform(r *rand.Rand) time.Duration {
	d := time.Duration(math.Exp(r.Float64() * math.Log(math.MaxInt64)))
	if r.IntN(20) == 0 {
		return -d
	}
	return d
}

// logBetween returns a duration from lo (inclusive) to hi spread evenly
// over the orders of magnitude in between, so that short and long ones are
// drawn as often.
func logBetween(r *rand.Rand, lo, hi time.Duration) time.Duration {
	span := float64(hi-lo) + 1
	return lo + time.Duration(math.Exp(r.Float64()*math.Log(span))) - 1
}

// quickConfig draws quick.CheckEqual's inputs from logUniform.
func quickConfig() *quick.Config {
	r := rand.New(rand.NewPCG(seed, 1))
	return &quick.Config{MaxCount: 100000, Values: func(args []reflect.Value, _ *quickrand.Rand) {
		args[0] = reflect.ValueOf(logUniform(r))
	}}
}

func TestRoundEdges(t *testing.T) {
	for _, d := range edgeDurations() {
		require.Equal(t, gtime.RoundInterval(d), interval.Round(d), "Round(%d)", int64(d))
	}
}

func TestRoundRandom(t *testing.T) {
	require.NoError(t, quick.CheckEqual(gtime.RoundInterval, interval.Round, quickConfig()))
}

// TestRoundSweep sweeps the whole table, to just past two years: every
// millisecond to 36s, every second to two days, then every minute. Each
// bound is a whole number of those units, so the sweep lands on it.
func TestRoundSweep(t *testing.T) {
	sweeps := []struct{ from, to, by time.Duration }{
		{0, 36 * time.Second, time.Millisecond},
		{36 * time.Second, 2 * day, time.Second},
		{2 * day, 2*year + time.Hour, time.Minute},
	}
	for _, s := range sweeps {
		for d := s.from; d <= s.to; d += s.by {
			if want, got := gtime.RoundInterval(d), interval.Round(d); got != want {
				t.Fatalf("Round(%s) = %s, gtime says %s", d, got, want)
			}
		}
	}
}

func TestFormatEdges(t *testing.T) {
	units := []time.Duration{time.Millisecond, time.Second, time.Minute, time.Hour, day, year}
	ds := edgeDurations()
	for _, u := range units {
		ds = append(ds, u-1, u, u+1, 59*u, 60*u-1, 1000*u-1)
	}
	for _, d := range ds {
		require.Equal(t, gtime.FormatInterval(d), interval.Format(d), "Format(%d)", int64(d))
	}
}

func TestFormatRandom(t *testing.T) {
	require.NoError(t, quick.CheckEqual(gtime.FormatInterval, interval.Format, quickConfig()))
}

// parseCases are hand-picked interval strings: every unit Grafana and Go
// know, brackets, signs, fractions, overflows and near misses.
var parseCases = []string{
	"", "0", "0s", "15", "90", "<15>", "<2m>", "2m>", "<2m", "<>", "<", ">", "<<2m>>", "< 2m>",
	"1ns", "1us", "1µs", "1μs", "1ms", "1s", "1m", "1h", "1d", "1w", "1M", "1y",
	"1m30s", "1h30m", "1.5h", ".5s", "1.s", "-5m", "+5m", "-0", "-1d", "+1d", "1.5d", "01d", "007w",
	"0d", "0w", "0M", "0y", "d", "w", "M", "y", "dd", "1dd", "1d1h", "1h1d", "1D", "1W", "1Y", "1H",
	"5x", "five minutes", " 1m", "1m ", "1 m", "１d", "1\u00a0d", "1e3s", "0x10s",
	"9223372036854775807", "9223372036854775808", "99999999999999999999", "9223372036", "9223372037",
	"9223372036854775807d", "99999999999999999999d", "106751d", "106752d", "15250w", "15251w",
	"292y", "293y", "3507M", "3508M", "9999999999y", "2562047h47m16.854775807s", "2562047h47m16.854775808s",
	"$__interval", "${__rate_interval}", "[[x]]",
}

// randomIntervalStrings are numbers of every size before every unit, with
// and without brackets, and short strings over the characters that matter.
func randomIntervalStrings(r *rand.Rand, n int) []string {
	units := []string{"", "ns", "us", "µs", "ms", "s", "m", "h", "d", "w", "M", "y"}
	const alphabet = "0123456789.-+<> dwMyhmsunµ"
	runes := []rune(alphabet)
	out := make([]string, 0, n)
	for range n / 2 {
		num := strconv.FormatUint(r.Uint64()>>r.UintN(64), 10)
		s := num + units[r.IntN(len(units))]
		switch r.IntN(4) {
		case 0:
			s = "<" + s + ">"
		case 1:
			s = "-" + s
		}
		out = append(out, s)
	}
	for range n - n/2 {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		out = append(out, b.String())
	}
	return out
}

// requireSameParse checks that interval.Parse gives gtime's value, or the
// same error message (users read it inside Compute's error).
func requireSameParse(t *testing.T, s string) {
	t.Helper()
	want, wantErr := gtime.ParseIntervalStringToTimeDuration(s)
	got, err := interval.Parse(s)
	if wantErr != nil {
		require.EqualError(t, err, wantErr.Error(), "Parse(%q)", s)
		require.Equal(t, want, got, "Parse(%q) value on error", s)
		return
	}
	require.NoError(t, err, "Parse(%q)", s)
	require.Equal(t, want, got, "Parse(%q)", s)
}

func TestParseCases(t *testing.T) {
	for _, s := range parseCases {
		requireSameParse(t, s)
	}
}

func TestParseRandom(t *testing.T) {
	for _, s := range randomIntervalStrings(rand.New(rand.NewPCG(seed, 2)), 100000) {
		requireSameParse(t, s)
	}
}

// TestParseDurationCases: interval.ParseDuration, which the data source's
// duration settings use, gives gtime.ParseDuration's value or fails where
// it fails (the settings write their own message).
func TestParseDurationCases(t *testing.T) {
	cases := append(append([]string{}, parseCases...), randomIntervalStrings(rand.New(rand.NewPCG(seed, 3)), 100000)...)
	for _, s := range cases {
		want, wantErr := gtime.ParseDuration(s)
		got, err := interval.ParseDuration(s)
		if wantErr != nil {
			require.Error(t, err, "ParseDuration(%q)", s)
			continue
		}
		require.NoError(t, err, "ParseDuration(%q)", s)
		require.Equal(t, want, got, "ParseDuration(%q)", s)
	}
}

// stepInput is one random query for TestComputeStep.
type stepInput struct {
	rng           time.Duration
	maxDataPoints int64
	intervalMs    int64
	queryInterval string
	scrape        time.Duration
}

// randomStepInput draws a query whose min step is unset or a positive
// duration (Compute counts zero durations other than "0s" as unset, where
// gtime would use them; variables are Compute's own rules).
func randomStepInput(r *rand.Rand) stepInput {
	minSteps := []string{"", "0s", "1ms", "250ms", "1s", "7s", "15s", "30s", "1m", "90", "<2m>", "5m",
		"1h", "1d", "1w", "1M", "1y", "1m30s", "1.5h"}
	return stepInput{
		rng:           logBetween(r, 0, 20*year),
		maxDataPoints: []int64{0, 1, 100, 900, 1500, 1920, 11000, 1e6, 1e9}[r.IntN(9)],
		intervalMs:    []int64{0, 0, 1, 15, 1000, 15000, 60000, 3600000, logBetween(r, 0, 1e10).Nanoseconds()}[r.IntN(9)],
		queryInterval: minSteps[r.IntN(len(minSteps))],
		scrape:        []time.Duration{0, time.Second, 10 * time.Second, 15 * time.Second, time.Minute, 90 * time.Second}[r.IntN(6)],
	}
}

// gtimeStep is Grafana's step (rules 1–4 of pkg/interval's package
// comment) computed with gtime.
func gtimeStep(t *testing.T, in stepInput) time.Duration {
	t.Helper()
	scrape := in.scrape
	if scrape == 0 {
		scrape = interval.DefaultScrape
	}
	minInterval, err := gtime.GetIntervalFrom(scrape.String(), in.queryInterval, in.intervalMs, interval.DefaultScrape)
	require.NoError(t, err)
	mdp := in.maxDataPoints
	if mdp == 0 {
		mdp = interval.DefaultMaxDataPoints
	}
	calculated := max(minInterval, gtime.RoundInterval(in.rng/time.Duration(mdp)))
	return max(calculated, gtime.RoundInterval(in.rng/interval.MaxPoints))
}

// TestComputeStep: whenever Compute does not raise the step for the
// 11,000-point limit, its step and $__interval are the ones gtime gives.
func TestComputeStep(t *testing.T) {
	r := rand.New(rand.NewPCG(seed, 3))
	to := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	compared := 0
	for range 20000 {
		in := randomStepInput(r)
		got, err := interval.Compute(interval.Input{From: to.Add(-in.rng), To: to, MaxDataPoints: in.maxDataPoints,
			IntervalMs: in.intervalMs, QueryInterval: in.queryInterval, Scrape: in.scrape})
		require.NoError(t, err, "%+v", in)
		if got.Clamped {
			continue
		}
		compared++
		want := gtimeStep(t, in)
		require.Equal(t, want, got.Step, "%+v", in)
		require.Equal(t, gtime.FormatInterval(want), interval.Interpolate("$__interval", got), "%+v", in)
	}
	require.Greater(t, compared, 10000, "most draws fit in 11,000 points")
}
