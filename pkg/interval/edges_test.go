package interval

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestComputeEdges pins Compute's exact answers at the edges of its
// arithmetic: the longest accepted range, the clamped steps (rounded up to
// whole milliseconds or seconds), and the saturating sums and products.
func TestComputeEdges(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	tests := []struct {
		name        string
		in          Input
		rng         time.Duration // with t0 as To when in.From is zero
		wantStep    time.Duration
		wantRate    time.Duration // 0: not checked
		wantClamped bool
	}{
		{
			// MaxRange itself is accepted (only longer ranges are refused).
			name: "exactly MaxRange", in: Input{From: epoch, To: epoch.Add(MaxRange)},
			wantStep: 30 * 24 * time.Hour,
		},
		{
			// 7700s/11000 = 700ms, which Grafana rounds down to 500ms: 15401
			// points, so the step is raised to ⌈7700s/10999⌉ = 700.06…ms,
			// rounded up to whole milliseconds.
			name: "clamp below a second rounds up to milliseconds", rng: 7700 * time.Second,
			in:       Input{MaxDataPoints: 1e9, IntervalMs: 1},
			wantStep: 701 * time.Millisecond, wantClamped: true,
		},
		{
			// ⌈176000s/10999⌉ = 16.001…s, rounded up to whole seconds.
			name: "clamp above a second rounds up to seconds", rng: 11000 * 16 * time.Second,
			in:       Input{MaxDataPoints: 1e6, Scrape: time.Second},
			wantStep: 17 * time.Second, wantClamped: true,
		},
		{
			// 10999 × 700ms: the raised step is exactly 700ms, so neither
			// ceiling adds one.
			name: "clamp to an exact number of milliseconds", rng: 10999 * 700 * time.Millisecond,
			in:       Input{MaxDataPoints: 1e9, IntervalMs: 1},
			wantStep: 700 * time.Millisecond, wantClamped: true,
		},
		{
			// 10999 × 16s/11000 = 15.99…s, which Grafana rounds down to 15s:
			// 11733 points, so the step is raised to exactly 16s.
			name: "clamp to an exact number of seconds", rng: 10999 * 16 * time.Second,
			in:       Input{MaxDataPoints: 1e6, Scrape: time.Second},
			wantStep: 16 * time.Second, wantClamped: true,
		},
		{
			// ⌈20s/10999⌉ = 1.818…ms.
			name: "clamp of a few milliseconds", rng: 20 * time.Second,
			in:       Input{MaxDataPoints: 1e9, IntervalMs: 1},
			wantStep: 2 * time.Millisecond, wantClamped: true,
		},
		{
			// The frontend's interval saturates at the largest whole number of
			// milliseconds a Duration holds.
			name: "huge intervalMs saturates to whole milliseconds", rng: time.Hour,
			in:       Input{IntervalMs: 1 << 62},
			wantStep: maxDuration / time.Millisecond * time.Millisecond, wantRate: maxDuration,
		},
		{
			name: "largest intervalMs that fits", rng: time.Hour,
			in:       Input{IntervalMs: int64(maxDuration / time.Millisecond)},
			wantStep: maxDuration / time.Millisecond * time.Millisecond, wantRate: maxDuration,
		},
		{
			// 4 × scrape fits exactly (3ns below the largest Duration), so
			// it is not saturated.
			name: "4 × scrape just fits", rng: time.Hour,
			in:       Input{Scrape: maxDuration / 4, QueryInterval: "$__rate_interval"},
			wantStep: maxDuration / 4 * 4, wantRate: maxDuration / 4 * 4,
		},
		{
			name: "4 × scrape overflows and saturates", rng: time.Hour,
			in:       Input{Scrape: maxDuration/4 + 1, QueryInterval: "$__rate_interval"},
			wantStep: maxDuration, wantRate: maxDuration,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in.From.IsZero() {
				in.From, in.To = span(tt.rng)
			}
			r, err := Compute(in)
			require.NoError(t, err)
			require.Equal(t, tt.wantStep, r.Step)
			if tt.wantRate != 0 {
				require.Equal(t, tt.wantRate, r.RateInterval)
			}
			require.Equal(t, tt.wantClamped, r.Clamped)
			requireValid(t, in, r)
		})
	}
}

// TestRangeTooLongMessage: the limit in the error is MaxRange in years.
func TestRangeTooLongMessage(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	_, err := Compute(Input{From: epoch, To: epoch.Add(MaxRange + 1)})
	require.ErrorContains(t, err, "is too long: at most 146 years")
}

// TestAlignDownCarry: far-future instants where sec·10⁹ + nsec overflows 64
// bits, so alignDown's 128-bit sum carries into the high word.
func TestAlignDownCarry(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    time.Time
		step time.Duration
	}{
		{name: "week step, last nanosecond", t: time.Unix(18446744073, 999999999).UTC(), step: 7 * 24 * time.Hour},
		{name: "odd step", t: time.Unix(18446744073, 999999999).UTC(), step: 7*24*time.Hour + 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := alignDown(tt.t, tt.step)
			rem := nanos(tt.t)
			rem.Mod(rem, nanos(time.Unix(0, int64(tt.step))))
			require.True(t, tt.t.Add(-time.Duration(rem.Int64())).Equal(got), "aligned %s to %s", got, tt.step)
		})
	}
}

// TestRangeRounding: $__range rounds half away from zero, also for a
// negative range (Compute never returns one, but Interpolate takes any
// Result).
func TestRangeRounding(t *testing.T) {
	for _, tt := range []struct {
		rng  time.Duration
		want string
	}{
		{rng: 1499 * time.Millisecond, want: "1s 1"},
		{rng: 1500 * time.Millisecond, want: "2s 2"},
		{rng: 0, want: "0s 0"},
		{rng: -1499 * time.Millisecond, want: "-1s -1"},
		{rng: -1500 * time.Millisecond, want: "-2s -2"},
	} {
		t.Run(tt.rng.String(), func(t *testing.T) {
			require.Equal(t, tt.want, Interpolate("$__range $__range_s", Result{Range: tt.rng}))
		})
	}
}

// TestNameCharacters: every edge of the name character classes ([A-Za-z0-9_],
// names starting with a letter or "_"): a built-in name followed by one more
// word character is another variable, left alone and reported.
func TestNameCharacters(t *testing.T) {
	r := Result{Interval: time.Minute}
	for _, c := range []string{"0", "9", "a", "z", "A", "Z", "_"} {
		t.Run("word character "+c, func(t *testing.T) {
			expr := "x[$__interval" + c + "]"
			require.Equal(t, expr, Interpolate(expr, r))
			got, ok := HasUnresolvedVariable(expr)
			require.True(t, ok)
			require.Equal(t, "$__interval"+c, got)
		})
	}
	for _, c := range []string{"/", ":", "@", "[", "`", "{"} {
		t.Run("not a word character "+c, func(t *testing.T) {
			require.Equal(t, "x[1m"+c+"]", Interpolate("x[$__interval"+c+"]", r))
		})
	}
	for _, tt := range []struct {
		expr, want string
	}{
		{expr: "$a", want: "$a"},
		{expr: "$z", want: "$z"},
		{expr: "$A", want: "$A"},
		{expr: "$Z", want: "$Z"},
		{expr: "$_", want: "$_"},
		{expr: "$0"},
		{expr: "$9"},
		{expr: "$@"},
		{expr: "$["},
		{expr: "$`"},
		{expr: "${{a}"},
		{expr: "[[a]]", want: "[[a]]"},
		{expr: "[[z:0]]", want: "[[z:0]]"},
		{expr: "[[Z]]", want: "[[Z]]"},
		{expr: "[[9]]"},
	} {
		t.Run("name "+tt.expr, func(t *testing.T) {
			got, ok := HasUnresolvedVariable(tt.expr)
			require.Equal(t, tt.want != "", ok)
			require.Equal(t, tt.want, got)
		})
	}
}
