package twin

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stepPoints are observations of a known step time a + b·seqs + c·tokens,
// with relative noise: what a fit must recover.
func stepPoints(a, b, c time.Duration, noise float64, n int) []Point {
	r := rand.New(rand.NewPCG(7, 9))
	var out []Point
	for i := 0; i < n; i++ {
		run := 1 + float64(r.IntN(32))
		tps := float64(r.IntN(4000))
		prompt := 200 + float64(r.IntN(2000))
		// itl = a + b·run + c·tps·itl, solved for itl.
		itl := (a.Seconds() + b.Seconds()*run) / (1 - c.Seconds()*tps)
		prefill := a.Seconds() + b.Seconds()*run + c.Seconds()*(prompt+tps*itl)
		out = append(out, Point{Running: run, ITL: itl * (1 + noise*r.NormFloat64()), PromptTPS: tps, ComputedTPS: math.NaN(), RunningSq: math.NaN(),
			Prefill: prefill * (1 + noise*r.NormFloat64()), PromptMean: prompt})
	}
	return out
}

func TestFitStepTime(t *testing.T) {
	tests := []struct {
		name        string
		a, b, c     time.Duration
		noise       float64
		n           int
		tol         float64
		wantErr     bool
		wantZeroSeq bool
	}{
		{name: "exact", a: 12 * time.Millisecond, b: 100 * time.Microsecond, c: 20 * time.Microsecond, n: 50, tol: 1e-6},
		{name: "noisy", a: 8 * time.Millisecond, b: 500 * time.Microsecond, c: 15 * time.Microsecond, noise: 0.03, n: 400, tol: 0.15},
		{name: "no per-sequence cost: dropped, not negative", a: 10 * time.Millisecond, c: 20 * time.Microsecond, noise: 0.02, n: 300, tol: 0.1, wantZeroSeq: true},
		{name: "too few points", a: 10 * time.Millisecond, n: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fit, err := FitStepTime(stepPoints(tt.a, tt.b, tt.c, tt.noise, tt.n))
			if tt.wantErr {
				require.ErrorIs(t, err, ErrTooFewPoints)
				return
			}
			require.NoError(t, err)
			require.InEpsilon(t, tt.a.Seconds(), fit.Base.Seconds(), tt.tol)
			require.InEpsilon(t, tt.c.Seconds(), fit.PerPrefillToken.Seconds(), tt.tol)
			if tt.wantZeroSeq {
				require.Less(t, fit.PerSeq, 20*time.Microsecond)
			} else {
				require.InEpsilon(t, tt.b.Seconds(), fit.PerSeq.Seconds(), tt.tol)
			}
			require.Greater(t, fit.R2, 0.8)
			require.Equal(t, 2*tt.n, fit.Points)
		})
	}
}

func TestFitStepTimeSkipsIdleAndBrokenPoints(t *testing.T) {
	pts := stepPoints(10*time.Millisecond, 200*time.Microsecond, 10*time.Microsecond, 0, 20)
	bad := []Point{{Running: 0, ITL: 5}, {Running: 3, ITL: math.NaN()}, {Running: 3, ITL: math.Inf(1)}, {Running: 3, ITL: -1},
		{Running: math.NaN(), ITL: 0.01}}
	fit, err := FitStepTime(append(pts, bad...))
	require.NoError(t, err)
	require.Equal(t, 40, fit.Points)
	require.InEpsilon(t, 0.010, fit.Base.Seconds(), 1e-6)
}

func TestFitStepTimeConstantBatch(t *testing.T) {
	// Every step alike: the costs cannot be told apart.
	var pts []Point
	for i := 0; i < 20; i++ {
		pts = append(pts, Point{Running: 4, ITL: 0.02, PromptTPS: 100})
	}
	_, err := FitStepTime(pts)
	require.ErrorIs(t, err, ErrTooFewPoints)
}

func TestMixedPrefill(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		p    Point
		want float64
	}{
		{name: "computed tokens over steps", p: Point{PromptTPS: 1000, ComputedTPS: 600, StepsPerSec: 50, ITL: 0.01}, want: 12},
		{name: "no computed tokens: prompt less the cache's share", p: Point{PromptTPS: 1000, ComputedTPS: nan, HitRate: 0.25, StepsPerSec: 50}, want: 15},
		{name: "no step count: over 1/ITL", p: Point{PromptTPS: 1000, ComputedTPS: nan, StepsPerSec: nan, ITL: 0.02}, want: 20},
		{name: "nothing known", p: Point{PromptTPS: nan, ComputedTPS: nan, StepsPerSec: nan, ITL: 0.02}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.InDelta(t, tt.want, mixedPrefill(tt.p), 1e-9)
		})
	}
}

// BenchmarkWhatIf is the what-if of one model: 12 replica counts, an
// hour of simulated traffic each at 10 requests/s (docs/performance.md).
func BenchmarkWhatIf(b *testing.B) {
	m := smallModel()
	m.Arrivals = make([]float64, 60)
	for i := range m.Arrivals {
		m.Arrivals[i] = 10
	}
	counts := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Predict(m, counts, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
