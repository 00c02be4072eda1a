// Package twin is the capacity what-if: a simulated copy of one model's
// fleet, its engine fitted from the engines' own metrics and its traffic
// replayed from their history, run in virtual time (pkg/sim) at any
// replica count to predict the waits each count would give.
//
// It owns the fit (fit.go), the request lengths (lengths.go) and the runs
// (this file). It reads no store and builds no frame: pkg/query hands it
// what pkg/vllm's answers hold and frames what it returns.
package twin

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

// Model is one model's fleet as the twin runs it.
type Model struct {
	Fit StepFit
	// MaxNumSeqs is the batch limit (the most requests seen running);
	// NumGPUBlocks and BlockSize the KV cache (cache_config_info), 0 when
	// unknown (then the cache never limits the batch).
	MaxNumSeqs, NumGPUBlocks, BlockSize int
	// BatchLimitQueued: requests waited while MaxNumSeqs ran, so it is the
	// scheduler's limit, not just the most the traffic asked for.
	BatchLimitQueued bool
	// HitRate is the share of prompt tokens the prefix cache served; the
	// twin's engines serve it alike (the fitted prefill cost is per token
	// computed).
	HitRate        float64
	Prompt, Output sim.Dist
	// Arrivals is the whole group's demand per step (requests/s), oldest
	// first, Step apart: the twin replays it, split at random across the
	// replicas (each one's arrivals a thinned share, as a random or
	// hash-based balancer splits them).
	Arrivals []float64
	Step     time.Duration
}

// Options bound a what-if.
type Options struct {
	// Duration is how much of the history's end is replayed at most (1h
	// when 0): the arrivals repeat from its start when the history is
	// shorter.
	Duration time.Duration
	// Seed makes runs repeatable; the same seed runs every count on the
	// same arrival process' randomness.
	Seed uint64
	// Scale multiplies the arrivals (1 when 0): headroom for growth.
	Scale float64
}

// Prediction is what the twin measured at one replica count.
type Prediction struct {
	Replicas int
	// QueueP99 and TTFTP99 are over the requests that finished (seconds),
	// read as the store reads them: counted into vLLM's buckets and
	// interpolated within one as histogram_quantile does, so they compare
	// with the measured p99 and the objective as a dashboard shows them.
	QueueP99, TTFTP99 float64
	// Utilisation is the mean share of the batch limit running.
	Utilisation float64
	// PreemptionsPerSec across the replicas.
	PreemptionsPerSec float64
	Finished          int
	// Overloaded: at the end more requests were waiting than 2% of the
	// arrivals and than the replicas' batches hold (the queue grew over
	// the run rather than rose and fell with a burst): the p99s are of
	// the requests that got through, a lower bound, and the run stopped
	// once two of its five-minute chunks in a row ended so.
	Overloaded bool
}

// DefaultDuration is the replay's length when Options leave it.
const DefaultDuration = time.Hour

// Predict runs the twin at each replica count (at once, a run per core)
// and returns the predictions in the counts' order.
func Predict(m Model, counts []int, o Options) ([]Prediction, error) {
	if err := m.validate(counts); err != nil {
		return nil, err
	}
	out := make([]Prediction, len(counts))
	errs := make([]error, len(counts))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, n := range counts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = run(m, n, o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ErrBadModel: the model or the counts cannot be run.
var ErrBadModel = errors.New("twin: cannot run")

// validate checks what the simulator's own validation does not reach.
func (m Model) validate(counts []int) error {
	switch {
	case len(m.Prompt.Bounds) == 0 || len(m.Output.Bounds) == 0:
		return fmt.Errorf("%w: no request lengths", ErrBadModel)
	case len(m.Arrivals) == 0 || m.Step <= 0:
		return fmt.Errorf("%w: no arrivals history", ErrBadModel)
	}
	for _, n := range counts {
		if n < 1 {
			return fmt.Errorf("%w: replica count %d (at least 1)", ErrBadModel, n)
		}
	}
	return nil
}

// run is one replica count's simulation, in chunks: a count whose queue
// keeps growing is overloaded, and once two chunks in a row say so the
// rest of the run would only lengthen the queue (and cost the most CPU of
// all counts), so it stops there.
func run(m Model, n int, o Options) (Prediction, error) {
	cfg, d := config(m, n, o)
	f, err := sim.NewFleet(cfg)
	if err != nil {
		return Prediction{}, err
	}
	var elapsed time.Duration
	growing := 0
	for elapsed < d {
		c := min(runChunk, d-elapsed)
		if err := f.Advance(c); err != nil {
			return Prediction{}, err
		}
		elapsed += c
		if growing = growth(f, n, m.MaxNumSeqs, growing); growing >= 2 {
			break
		}
	}
	return measure(f, n, elapsed, m.MaxNumSeqs), nil
}

// runChunk is how much simulated time passes between overload checks.
const runChunk = 5 * time.Minute

// growth counts the chunks in a row that ended overloaded.
func growth(f *sim.Fleet, n, batch, before int) int {
	if _, waiting, arrived := totals(f); overloaded(waiting, arrived, n, batch) {
		return before + 1
	}
	return 0
}

// totals are the fleet's running integral, waiting now and arrivals.
func totals(f *sim.Fleet) (running float64, waiting, arrived int64) {
	for _, e := range f.Snapshot().Engines {
		running += e.RunningIntegral
		arrived += e.Arrivals
		waiting += int64(e.Waiting)
	}
	return running, waiting, arrived
}

// overloaded: more waiting than 2% of the arrivals and than the replicas'
// batches hold.
func overloaded(waiting, arrived int64, n, batch int) bool {
	return float64(waiting) > math.Max(0.02*float64(arrived), float64(n*max(1, batch)))
}

// config is the simulated fleet: n replicas of the fitted engine, with
// the measured prefix-cache hit rate and no aborts or errors.
func config(m Model, n int, o Options) (sim.Config, time.Duration) {
	factors, meanRate := trace(m.Arrivals, m.Step, o)
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate = o.Seed, 0, meanRate/float64(n)
	cfg.Profile = sim.Profile{Kind: sim.Trace, Period: m.Step, Factors: factors}
	// measure reads the queue-time and TTFT histograms and the counters,
	// never the logs or the other histograms.
	cfg.RequestLog, cfg.PreemptionLog, cfg.Lean = 0, 0, true
	cfg.Engine = engine(m)
	cfg.Instances = make([]sim.InstanceConfig, n)
	for i := range cfg.Instances {
		cfg.Instances[i] = sim.InstanceConfig{Model: "twin"}
	}
	return cfg, time.Duration(len(factors)) * m.Step
}

// engine is the fitted engine as the simulator's parameters.
func engine(m Model) sim.EngineParams {
	p := sim.DefaultEngineParams()
	p.StepBase, p.StepPerSeq, p.StepPerPrefillToken = m.Fit.Base, m.Fit.PerSeq, m.Fit.PerPrefillToken
	p.MaxNumSeqs = max(1, m.MaxNumSeqs)
	p.PromptTokens, p.OutputTokens = m.Prompt, m.Output
	longest := int(slices.Max(m.Prompt.Bounds) + slices.Max(m.Output.Bounds) + 1)
	p.MaxModelLen, p.MaxTokens = longest, longest
	p.MaxNumBatchedTokens = max(p.MaxNumBatchedTokens, int(slices.Max(m.Prompt.Bounds))+1)
	if m.NumGPUBlocks > 0 && m.BlockSize > 0 {
		p.NumGPUBlocks, p.BlockSize = m.NumGPUBlocks, m.BlockSize
	} else {
		p.BlockSize = 16
		p.NumGPUBlocks = p.MaxNumSeqs*longest/16 + 1
	}
	p.PrefixCaching, p.PrefixHitRate = m.HitRate > 0, m.HitRate
	p.AbortRate, p.EngineAbortRate, p.ErrorRate, p.MaxWaiting = 0, 0, 0, 0
	p.MaxTokensSetRate = 1
	return p
}

// trace is the arrivals as factors on their mean, the history's last
// Duration of them.
func trace(arrivals []float64, step time.Duration, o Options) ([]float64, float64) {
	d := o.Duration
	if d <= 0 {
		d = DefaultDuration
	}
	keep := max(1, int(d/step))
	if len(arrivals) > keep {
		arrivals = arrivals[len(arrivals)-keep:]
	}
	scale := o.Scale
	if scale <= 0 {
		scale = 1
	}
	sum := 0.0
	for _, a := range arrivals {
		sum += zero(a)
	}
	meanRate := sum / float64(len(arrivals))
	factors := make([]float64, len(arrivals))
	for i, a := range arrivals {
		if meanRate > 0 {
			factors[i] = zero(a) / meanRate
		}
	}
	return factors, meanRate * scale
}

// measure reads the run's waits, batch occupancy and preemptions.
func measure(f *sim.Fleet, n int, d time.Duration, batch int) Prediction {
	// The engines' own histograms, as Prometheus would read them: queue
	// time per finished request, TTFT per first token (requests still
	// running at the end included, as in vLLM's exposition).
	queue, ttft := f.LatencyCounts()
	p := Prediction{Replicas: n, QueueP99: bucketQuantile(queue, 0.99, sim.QueueTimeBounds()),
		TTFTP99: bucketQuantile(ttft, 0.99, sim.TTFTBounds()), Finished: int(total(queue))}
	running, waiting, arrived := totals(f)
	var preempted int64
	for _, e := range f.Snapshot().Engines {
		preempted += e.Preemptions
	}
	p.Utilisation = running / d.Seconds() / float64(n*max(1, batch))
	p.PreemptionsPerSec = float64(preempted) / d.Seconds()
	p.Overloaded = overloaded(waiting, arrived, n, batch)
	return p
}

// total is the number of observations in per-bucket counts.
func total(counts []uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// bucketQuantile is histogram_quantile(q) over per-bucket counts (not
// cumulative) of bounds with +Inf last: the rank's bucket, interpolated
// linearly from its lower bound (0 for the first); a rank in +Inf gives the
// last finite bound, as Prometheus does. NaN when there are no observations.
func bucketQuantile(buckets []uint64, q float64, bounds []float64) float64 {
	n := total(buckets)
	if n == 0 {
		return math.NaN()
	}
	rank, below := q*float64(n), 0.0
	for i, b := range buckets {
		c := float64(b)
		if below+c < rank || c == 0 {
			below += c
			continue
		}
		if i == len(bounds) {
			return bounds[len(bounds)-1]
		}
		lo := 0.0
		if i > 0 {
			lo = bounds[i-1]
		}
		return lo + (bounds[i]-lo)*(rank-below)/c
	}
	return bounds[len(bounds)-1]
}

// Needed is the fewest replicas among the predictions whose p99 of the
// objective's wait (pick) meets threshold and that are not overloaded; 0
// when none does.
func Needed(preds []Prediction, threshold float64, pick func(Prediction) float64) int {
	best := 0
	for _, p := range preds {
		v := pick(p)
		if !p.Overloaded && !math.IsNaN(v) && v <= threshold && (best == 0 || p.Replicas < best) {
			best = p.Replicas
		}
	}
	return best
}
