package interval

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// t0 is a fixed, step-aligned instant so that the vectors do not depend on
// the clock.
var t0 = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

func span(d time.Duration) (time.Time, time.Time) { return t0.Add(-d), t0 }

// TestReferenceVectors holds the six test vectors of Grafana's Prometheus
// step math (scrape 15s). In the vectors, "interval" is the query's own
// min-step string (Input.QueryInterval) and "query Interval" is the
// frontend's $__interval (Input.IntervalMs, from backend.DataQuery.Interval).
func TestReferenceVectors(t *testing.T) {
	tests := []struct {
		name          string
		rng           time.Duration
		intervalMs    int64
		queryInterval string
		wantStep      time.Duration // 0: not part of the vector
		expr, want    string        // "": not part of the vector
	}{
		{name: "12h, no intervalMs: step 30s", rng: 12 * time.Hour, wantStep: 30 * time.Second},
		{name: "1h: step 15s", rng: time.Hour, wantStep: 15 * time.Second},
		{
			name: "48h, intervalMs 60000: step 2m, $__interval 2m", rng: 48 * time.Hour, intervalMs: 60000,
			wantStep: 2 * time.Minute, expr: "rate(x[$__interval])", want: "rate(x[2m])",
		},
		{
			name: "48h, query Interval 2m: $__rate_interval 2m15s", rng: 48 * time.Hour, intervalMs: 120000,
			expr: "$__rate_interval $__rate_interval_s $__rate_interval_ms", want: "2m15s 135 135000",
		},
		{
			name: `5m, interval "5m", query Interval 1m: [20m0s]`, rng: 5 * time.Minute,
			queryInterval: "5m", intervalMs: 60000,
			expr: "rate(x[$__rate_interval])", want: "rate(x[20m0s])",
		},
		{
			name: `5m, interval "$__rate_interval": step 1m, [1m0s]`, rng: 5 * time.Minute,
			queryInterval: "$__rate_interval",
			wantStep:      time.Minute, expr: "rate(x[$__rate_interval])", want: "rate(x[1m0s])",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := span(tt.rng)
			r, err := Compute(Input{
				From: from, To: to, IntervalMs: tt.intervalMs,
				QueryInterval: tt.queryInterval, Scrape: 15 * time.Second,
			})
			require.NoError(t, err)
			if tt.wantStep != 0 {
				require.Equal(t, tt.wantStep, r.Step)
			}
			if tt.expr != "" {
				require.Equal(t, tt.want, Interpolate(tt.expr, r))
			}
			require.False(t, r.Clamped)
		})
	}
}

func TestComputeRules(t *testing.T) {
	tests := []struct {
		name             string
		in               Input
		wantStep         time.Duration
		wantRate         time.Duration
		wantClamped      bool
		wantInterpolated map[string]string
	}{
		{
			name:     "scrape 0 means 15s",
			in:       Input{MaxDataPoints: 0},
			wantStep: 15 * time.Second, wantRate: time.Minute,
		},
		{
			name:     "custom scrape is the fallback min interval",
			in:       Input{Scrape: 30 * time.Second},
			wantStep: 30 * time.Second, wantRate: 2 * time.Minute,
		},
		{
			name:     `"0s" counts as unset`,
			in:       Input{QueryInterval: "0s", IntervalMs: 5000},
			wantStep: 5 * time.Second, wantRate: time.Minute,
		},
		{
			name:     `"0m" counts as unset too`,
			in:       Input{QueryInterval: "0m"},
			wantStep: 15 * time.Second, wantRate: time.Minute,
		},
		{
			name:     "query min step beats intervalMs",
			in:       Input{QueryInterval: "1m", IntervalMs: 5000},
			wantStep: time.Minute, wantRate: 4 * time.Minute,
		},
		{
			name:     "bare number is seconds",
			in:       Input{QueryInterval: "90"},
			wantStep: 90 * time.Second,
		},
		{
			name:     "angle brackets are accepted",
			in:       Input{QueryInterval: "<2m>"},
			wantStep: 2 * time.Minute,
		},
		{
			name:     "$__interval as min step counts as unset; rate uses the step",
			in:       Input{QueryInterval: "${__interval}", IntervalMs: 20000},
			wantStep: 20 * time.Second, wantRate: 80 * time.Second,
		},
		{
			name:     "dashboard variable as min step counts as unset",
			in:       Input{QueryInterval: "$step", IntervalMs: 20000},
			wantStep: 20 * time.Second, wantRate: time.Minute,
		},
		{
			name:     "${__rate_interval} form",
			in:       Input{QueryInterval: "${__rate_interval}", IntervalMs: 60000},
			wantStep: 75 * time.Second, wantRate: 75 * time.Second,
		},
		{
			name:     "maxDataPoints raises the step",
			in:       Input{MaxDataPoints: 100},
			wantStep: 30 * time.Second, // Round(1h/100 = 36s) = 30s > 15s
		},
		{
			name: "range formats",
			in:   Input{From: t0.Add(-time.Hour - 1500*time.Millisecond), To: t0},
			wantInterpolated: map[string]string{
				"$__range":    "3602s",
				"${__range}":  "3602s",
				"$__range_s":  "3602",
				"$__range_ms": "3601500",
			},
		},
		{
			name: "interval formats, both forms",
			in:   Input{IntervalMs: 90000},
			wantInterpolated: map[string]string{
				"[$__interval]":                   "[1m]",
				"[${__interval}]":                 "[1m]",
				"$__interval_ms ${__interval_ms}": "90000 90000",
				"$__interval_s/${__interval_s}":   "90/90",
				"${__rate_interval}":              "1m45s",
				"${__rate_interval_ms}":           "105000",
				"${__rate_interval_s}":            "105",
			},
		},
		{
			name: "longest names win and unknown names stay",
			in:   Input{IntervalMs: 60000},
			wantInterpolated: map[string]string{
				"$__interval_ms$__interval":                "600001m",
				"$__interval_x ${__interval_x} $foo $":     "$__interval_x ${__interval_x} $foo $",
				"${__interval:text} ${__interval":          "${__interval:text} ${__interval",
				`label_replace(x, "a", "$1", "b", "(.*)")`: `label_replace(x, "a", "$1", "b", "(.*)")`,
				"sum_over_time(x[$__range:$__interval])":   "sum_over_time(x[3600s:1m])",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in.From.IsZero() {
				in.From, in.To = span(time.Hour)
			}
			r, err := Compute(in)
			require.NoError(t, err)
			if tt.wantStep != 0 {
				require.Equal(t, tt.wantStep, r.Step)
				require.Equal(t, tt.wantStep, r.Interval)
			}
			if tt.wantRate != 0 {
				require.Equal(t, tt.wantRate, r.RateInterval)
			}
			require.Equal(t, tt.wantClamped, r.Clamped)
			for expr, want := range tt.wantInterpolated {
				require.Equal(t, want, Interpolate(expr, r), expr)
			}
		})
	}
}

func TestComputeAlignment(t *testing.T) {
	tests := []struct {
		name             string
		from, to         time.Time
		queryInterval    string
		wantStart        time.Time
		wantEnd          time.Time
		wantStep         time.Duration
		wantPointsAtMost int64
	}{
		{
			name:          "minute step",
			from:          time.Date(2025, 6, 1, 10, 0, 37, 123, time.UTC),
			to:            time.Date(2025, 6, 1, 11, 0, 59, 999, time.UTC),
			queryInterval: "1m",
			wantStep:      time.Minute,
			wantStart:     time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC),
			wantEnd:       time.Date(2025, 6, 1, 11, 0, 0, 0, time.UTC),
		},
		{
			name:          "odd step aligns to the Unix epoch, not the zero time",
			from:          time.Unix(1000, 0).UTC(),
			to:            time.Unix(2000, 5).UTC(),
			queryInterval: "7s",
			wantStep:      7 * time.Second,
			wantStart:     time.Unix(994, 0).UTC(),
			wantEnd:       time.Unix(1995, 0).UTC(),
		},
		{
			name:          "week step aligns to the Unix epoch (a Thursday)",
			from:          time.Date(2025, 6, 4, 12, 0, 0, 0, time.UTC),
			to:            time.Date(2025, 6, 20, 0, 0, 0, 0, time.UTC),
			queryInterval: "1w",
			wantStep:      7 * 24 * time.Hour,
			wantStart:     time.Date(2025, 5, 29, 0, 0, 0, 0, time.UTC),
			wantEnd:       time.Date(2025, 6, 19, 0, 0, 0, 0, time.UTC),
		},
		{
			name:          "before 1970",
			from:          time.Unix(-61, 0).UTC(),
			to:            time.Unix(-1, 0).UTC(),
			queryInterval: "1m",
			wantStep:      time.Minute,
			wantStart:     time.Unix(-120, 0).UTC(),
			wantEnd:       time.Unix(-60, 0).UTC(),
		},
		{
			name:          "empty range",
			from:          time.Unix(90, 0).UTC(),
			to:            time.Unix(90, 0).UTC(),
			queryInterval: "1m",
			wantStep:      time.Minute,
			wantStart:     time.Unix(60, 0).UTC(),
			wantEnd:       time.Unix(60, 0).UTC(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compute(Input{From: tt.from, To: tt.to, QueryInterval: tt.queryInterval})
			require.NoError(t, err)
			require.Equal(t, tt.wantStep, r.Step)
			require.True(t, tt.wantStart.Equal(r.Start), "start %s", r.Start)
			require.True(t, tt.wantEnd.Equal(r.End), "end %s", r.End)
			requireValid(t, Input{From: tt.from, To: tt.to}, r)
		})
	}
}

func TestComputeNeverExceedsMaxPoints(t *testing.T) {
	year := 365 * 24 * time.Hour
	tests := []struct {
		name        string
		rng         time.Duration
		in          Input
		wantClamped bool
	}{
		{name: "10 years, maxDataPoints 1e9", rng: 10 * year, in: Input{MaxDataPoints: 1e9}, wantClamped: true},
		{name: "100 years, maxDataPoints 1e9", rng: 100 * year, in: Input{MaxDataPoints: 1e9}, wantClamped: true},
		{name: "2 days at 1ms intervalMs", rng: 48 * time.Hour, in: Input{MaxDataPoints: 1e9, IntervalMs: 1}, wantClamped: true},
		{name: "11000 × 16s", rng: 11000 * 16 * time.Second, in: Input{MaxDataPoints: 1e6, Scrape: time.Second}, wantClamped: true},
		{name: "exactly 11000 points fit", rng: 10999 * time.Minute, in: Input{QueryInterval: "1m", MaxDataPoints: 1e6}},
		{name: "7 days default points", rng: 7 * 24 * time.Hour},
		{name: "huge min step", rng: time.Hour, in: Input{QueryInterval: "100y"}},
		{name: "huge scrape", rng: time.Hour, in: Input{Scrape: 200 * year, QueryInterval: "$__rate_interval"}},
		{name: "huge intervalMs", rng: time.Hour, in: Input{IntervalMs: 1 << 62}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.From, in.To = span(tt.rng)
			r, err := Compute(in)
			require.NoError(t, err)
			require.Equal(t, tt.wantClamped, r.Clamped)
			requireValid(t, in, r)
		})
	}
}

func TestComputeErrors(t *testing.T) {
	from, to := span(time.Hour)
	tests := []struct {
		name    string
		in      Input
		wantErr []string
	}{
		{name: "to before from", in: Input{From: to, To: from}, wantErr: []string{"invalid time range", "before"}},
		{name: "negative maxDataPoints", in: Input{From: from, To: to, MaxDataPoints: -1}, wantErr: []string{"maxDataPoints", "-1"}},
		{
			name:    "unparseable interval",
			in:      Input{From: from, To: to, QueryInterval: "five minutes"},
			wantErr: []string{"interval", `"five minutes"`, `"30s"`, `"2m"`},
		},
		{name: "negative interval", in: Input{From: from, To: to, QueryInterval: "-5m"}, wantErr: []string{"interval", `"-5m"`, "negative"}},
		{
			name:    "range too long",
			in:      Input{From: time.Unix(0, 0), To: time.Unix(0, 0).Add(200 * 365 * 24 * time.Hour)},
			wantErr: []string{"too long"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compute(tt.in)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalidRequest, "errors are the request's fault")
			for _, s := range tt.wantErr {
				require.Contains(t, err.Error(), s)
			}
		})
	}
}

// TestComputeErrorMessage: the ErrInvalidRequest mark adds nothing to the
// message users see, and the cause stays reachable.
func TestComputeErrorMessage(t *testing.T) {
	from, to := span(time.Hour)
	_, err := Compute(Input{From: from, To: to, QueryInterval: "five minutes"})
	require.EqualError(t, err, `invalid interval "five minutes" (the query's min step): `+
		`time: invalid duration "five minutes"; use a duration such as "30s", "2m", "1h" or "1d", or "$__rate_interval"`)

	_, err = Compute(Input{From: from, To: to, QueryInterval: "<99999999999999999999>"})
	require.ErrorIs(t, err, ErrInvalidRequest)
	require.ErrorIs(t, err, strconv.ErrRange, "the parse error is wrapped")
	var numErr *strconv.NumError
	require.True(t, errors.As(err, &numErr))
	require.Equal(t, "99999999999999999999", numErr.Num)
}

func TestHasUnresolvedVariable(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{expr: `sum(rate(vllm:num_requests_running[5m]))`},
		{expr: `up{job=~"vllm.*$"}`},
		{expr: `up{job=~"[[:alpha:]]+"}`},
		{expr: `label_replace(up, "x", "$1-${2}", "job", "(.*)-(.*)")`},
		{expr: `price * 2 $`},
		{expr: `up{instance="$instance"}`, want: "$instance"},
		{expr: `up{model=~"${model:regex}"} + $other`, want: "${model:regex}"},
		{expr: `up{job="[[job]]"}`, want: "[[job]]"},
		{expr: `up{job="[[job:csv]]"}`, want: "[[job:csv]]"},
		{expr: `rate(x[$__rate_interval])`, want: "$__rate_interval"},
		{expr: `x[$__interval_x]`, want: "$__interval_x"},
		{expr: `x ${unterminated`},
		{expr: `x [[unterminated`},
		{expr: `${a}`, want: "${a}"},
		{expr: `}${a} ${b}`, want: "${a}"},
		{expr: `${1} ${b.c:d}`, want: "${b.c:d}"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, ok := HasUnresolvedVariable(tt.expr)
			require.Equal(t, tt.want != "", ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestHasUnresolvedVariableIsLinear(t *testing.T) {
	open := strings.Repeat("${a", 200000)
	start := time.Now()
	_, ok := HasUnresolvedVariable(open)
	require.False(t, ok)
	got, ok := HasUnresolvedVariable(open + "}")
	require.True(t, ok)
	require.Len(t, got, len(open)+1)
	require.Less(t, time.Since(start), time.Second)
}

func TestInterpolateThenNoBuiltinsLeft(t *testing.T) {
	from, to := span(time.Hour)
	r, err := Compute(Input{From: from, To: to})
	require.NoError(t, err)
	names := []string{"interval", "interval_ms", "interval_s", "rate_interval", "rate_interval_ms",
		"rate_interval_s", "range", "range_s", "range_ms"}
	var b strings.Builder
	for _, n := range names {
		b.WriteString("$__" + n + " ${__" + n + "} ")
	}
	got := Interpolate(b.String(), r)
	v, ok := HasUnresolvedVariable(got)
	require.False(t, ok, "left %q in %q", v, got)
}

// requireValid checks the invariants every Result must hold.
func requireValid(t testing.TB, in Input, r Result) {
	t.Helper()
	require.Positive(t, r.Step)
	require.Equal(t, r.Step, r.Interval)
	require.GreaterOrEqual(t, r.RateInterval, time.Duration(0))
	require.Equal(t, in.To.Sub(in.From), r.Range)
	step := big.NewInt(int64(r.Step))
	for _, c := range []struct {
		got, orig time.Time
	}{{r.Start, in.From}, {r.End, in.To}} {
		got, orig := nanos(c.got), nanos(c.orig)
		require.Zero(t, new(big.Int).Mod(got, step).Sign(), "%s is not aligned to %s", c.got, r.Step)
		require.LessOrEqual(t, got.Cmp(orig), 0, "aligned time after original")
		require.Positive(t, new(big.Int).Add(got, step).Cmp(orig), "aligned down by a step or more")
	}
	points := new(big.Int).Sub(nanos(r.End), nanos(r.Start))
	points.Div(points, step).Add(points, big.NewInt(1))
	require.LessOrEqual(t, points.Int64(), int64(MaxPoints), "points (step %s, range %s)", r.Step, r.Range)
	require.Equal(t, points.Int64(), r.Points())
}

// nanos returns t in nanoseconds since the Unix epoch without overflowing.
func nanos(t time.Time) *big.Int {
	n := new(big.Int).Mul(big.NewInt(t.Unix()), big.NewInt(int64(time.Second)))
	return n.Add(n, big.NewInt(int64(t.Nanosecond())))
}

func FuzzCompute(f *testing.F) {
	day := int64(24 * time.Hour)
	f.Add(t0.UnixNano(), int64(12*time.Hour), int64(0), int64(0), "", int64(15*time.Second))
	f.Add(t0.UnixNano(), int64(48*time.Hour), int64(0), int64(60000), "", int64(0))
	f.Add(t0.UnixNano(), int64(5*time.Minute), int64(1500), int64(60000), "5m", int64(15*time.Second))
	f.Add(t0.UnixNano(), int64(5*time.Minute), int64(0), int64(0), "$__rate_interval", int64(15*time.Second))
	f.Add(t0.UnixNano(), 3650*day, int64(1e9), int64(1), "${__interval}", int64(time.Second))
	f.Add(int64(-1), 100*day, int64(1), int64(-5), "1w", int64(-1))
	f.Add(int64(0), int64(0), int64(-1), int64(0), "0s", int64(0))
	f.Add(int64(1)<<62, int64(1)<<61, int64(7), int64(1)<<62, "<99999y>", int64(1)<<62)
	f.Fuzz(func(t *testing.T, fromNs, rangeNs, maxDataPoints, intervalMs int64, queryInterval string, scrapeNs int64) {
		from := time.Unix(0, fromNs).UTC()
		in := Input{
			From: from, To: from.Add(time.Duration(rangeNs)), MaxDataPoints: maxDataPoints,
			IntervalMs: intervalMs, QueryInterval: queryInterval, Scrape: time.Duration(scrapeNs),
		}
		r, err := Compute(in)
		if rangeNs < 0 || maxDataPoints < 0 {
			require.Error(t, err)
		}
		if err != nil {
			return
		}
		requireValid(t, in, r)
		_ = Interpolate(queryInterval+" $__interval ${__rate_interval} $__range_ms", r)
		_, _ = HasUnresolvedVariable(queryInterval)
	})
}

func BenchmarkCompute(b *testing.B) {
	from, to := span(48 * time.Hour)
	in := Input{From: from, To: to, IntervalMs: 60000, QueryInterval: "$__rate_interval", Scrape: 15 * time.Second}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInterpolate(b *testing.B) {
	from, to := span(48 * time.Hour)
	r, err := Compute(Input{From: from, To: to, IntervalMs: 60000})
	require.NoError(b, err)
	const expr = `sum by (model_name) (rate(vllm:request_success_total{instance=~"$instance"}[$__rate_interval])) / $__interval_s`
	b.ReportAllocs()
	for b.Loop() {
		_ = Interpolate(expr, r)
	}
}
