package twin

// The engine's fit: vLLM's step time is close to linear in what a step
// carries (a fixed cost, a cost per sequence in the batch and a cost per
// prefill token), and two families the store holds observe it from two
// sides: the inter-token latency is one decode step with the batch's
// prefill mixed in, the prefill time one step with a request's own prompt
// in it. Both are regressed on the running requests and the prefill tokens
// a step carries, together, so each side pins what the other leaves loose.

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Point is one server over one step of the history: the means over the
// step's rate window.
type Point struct {
	Running    float64 // requests running (the batch)
	RunningSq  float64 // the mean of running², NaN when unknown
	ITL        float64 // mean inter-token latency, seconds
	PromptTPS  float64 // prompt tokens/s
	Prefill    float64 // mean prefill time of the requests finished, seconds
	PromptMean float64 // mean prompt length of the requests finished
	// StepsPerSec is how many steps the engine ran a second (observations
	// of vllm:iteration_tokens_total), NaN when unknown.
	StepsPerSec float64
	// ComputedTPS is the prefill tokens/s the engine computed (iteration
	// tokens less generated ones: prefix-cache hits left out, prompts
	// recomputed after a preemption counted), NaN when unknown; HitRate
	// the share of prompt tokens the prefix cache served (0 when unknown).
	ComputedTPS, HitRate float64
}

// StepFit is the fitted step time a + b·sequences + c·prefill tokens.
type StepFit struct {
	Base, PerSeq, PerPrefillToken time.Duration
	// R2 is the share of the observations' variance the fit explains;
	// Points how many observations it used (each point gives up to two).
	R2     float64
	Points int
}

// ErrTooFewPoints: the history holds too few busy steps to fit a step time.
var ErrTooFewPoints = errors.New("twin: too few busy steps to fit the engine's step time")

// MinFitPoints is how many observations a fit needs.
const MinFitPoints = 8

// FitStepTime fits the step time from the points: every point whose batch
// was running gives one observation from its inter-token latency and,
// when requests finished, one from their prefill time. A coefficient that
// comes out negative (noise on a cost too small to see) is dropped and
// the rest refitted.
func FitStepTime(points []Point) (StepFit, error) {
	xs, ys := observations(points)
	if len(ys) < MinFitPoints {
		return StepFit{}, fmt.Errorf("%w: %d observations, %d needed", ErrTooFewPoints, len(ys), MinFitPoints)
	}
	use := []bool{true, true, true}
	var beta []float64
	for {
		var err error
		beta, err = leastSquares(xs, ys, use)
		if err != nil {
			return StepFit{}, err
		}
		neg := negative(beta, use)
		if neg < 0 {
			break
		}
		use[neg] = false
	}
	return StepFit{Base: seconds(beta[0]), PerSeq: seconds(beta[1]), PerPrefillToken: seconds(beta[2]),
		R2: rSquared(xs, ys, beta), Points: len(ys)}, nil
}

// observations are the regression's rows: [1, sequences, prefill tokens]
// against a step's duration. A decode step carries, on average, the
// prefill tokens arriving per second times the step's length; a request's
// prefill step carries its own prompt besides.
func observations(points []Point) ([][3]float64, []float64) {
	var xs [][3]float64
	var ys []float64
	for _, p := range points {
		if !(p.Running >= 0.5) || !finite(p.ITL) || p.ITL <= 0 {
			continue
		}
		mixed := mixedPrefill(p)
		// The mean inter-token latency weighs each step by its tokens, one
		// per running request: the batch it sees is E[r²]/E[r].
		seen := p.Running
		if finite(p.RunningSq) && p.RunningSq >= p.Running*p.Running {
			seen = p.RunningSq / p.Running
		}
		xs = append(xs, [3]float64{1, seen, mixed})
		ys = append(ys, p.ITL)
		if finite(p.Prefill) && p.Prefill > 0 && finite(p.PromptMean) {
			xs = append(xs, [3]float64{1, p.Running, p.PromptMean*(1-p.HitRate) + mixed})
			ys = append(ys, p.Prefill)
		}
	}
	return xs, ys
}

// mixedPrefill is the prefill tokens an average step computes: the
// computed tokens/s (else the prompt tokens/s less the prefix cache's
// share) over steps/s; without the step count, over 1/ITL, which
// undercounts them when the engine idles between steps. Recomputed
// prompts after preemptions are only in the computed tokens: a fleet that
// preempts and does not export iteration_tokens_total fits slow steps.
func mixedPrefill(p Point) float64 {
	tps := zero(p.PromptTPS) * (1 - zero(p.HitRate))
	if finite(p.ComputedTPS) && p.ComputedTPS >= 0 {
		tps = p.ComputedTPS
	}
	if finite(p.StepsPerSec) && p.StepsPerSec > 0 {
		return tps / p.StepsPerSec
	}
	return tps * p.ITL
}

// leastSquares solves the normal equations over the columns in use (the
// others' coefficients are 0).
func leastSquares(xs [][3]float64, ys []float64, use []bool) ([]float64, error) {
	var cols []int
	for j, u := range use {
		if u {
			cols = append(cols, j)
		}
	}
	n := len(cols)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
	}
	for r, x := range xs {
		for i, ci := range cols {
			for j, cj := range cols {
				a[i][j] += x[ci] * x[cj]
			}
			a[i][n] += x[ci] * ys[r]
		}
	}
	sol, err := solve(a)
	if err != nil {
		return nil, err
	}
	beta := make([]float64, 3)
	for i, c := range cols {
		beta[c] = sol[i]
	}
	return beta, nil
}

// solve is Gauss-Jordan elimination with partial pivoting on an
// augmented matrix.
func solve(a [][]float64) ([]float64, error) {
	n := len(a)
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil, fmt.Errorf("%w: the steps do not vary enough to tell the costs apart", ErrTooFewPoints)
		}
		a[col], a[piv] = a[piv], a[col]
		for r := 0; r < n; r++ {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= n; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = a[i][n] / a[i][i]
	}
	return out, nil
}

// negative is the most negative coefficient in use other than the fixed
// cost (-1 when none is): the one to drop.
func negative(beta []float64, use []bool) int {
	worst, at := 0.0, -1
	for j := 1; j < len(beta); j++ {
		if use[j] && beta[j] < worst {
			worst, at = beta[j], j
		}
	}
	return at
}

func rSquared(xs [][3]float64, ys []float64, beta []float64) float64 {
	m := 0.0
	for _, y := range ys {
		m += y
	}
	m /= float64(len(ys))
	var res, tot float64
	for i, x := range xs {
		pred := beta[0]*x[0] + beta[1]*x[1] + beta[2]*x[2]
		res += (ys[i] - pred) * (ys[i] - pred)
		tot += (ys[i] - m) * (ys[i] - m)
	}
	if tot == 0 {
		return 1
	}
	return 1 - res/tot
}

func seconds(s float64) time.Duration { return time.Duration(math.Max(0, s) * float64(time.Second)) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func zero(v float64) float64 {
	if !finite(v) {
		return 0
	}
	return v
}
