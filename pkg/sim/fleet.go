package sim

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
)

var (
	// ErrRunning is returned by Advance and Start while Start's wall-clock
	// driver owns simulated time.
	ErrRunning = errors.New("sim: fleet is running on the wall clock")
	// ErrClosed is returned by Start after Close.
	ErrClosed = errors.New("sim: fleet is closed")
	// ErrNoInstance is returned for an instance index outside the fleet.
	ErrNoInstance = errors.New("sim: no such instance")
)

// Fleet is a set of simulated vLLM instances. Its methods are safe for
// concurrent use.
type Fleet struct {
	cfg       Config
	instances []*instance
	engines   []*engine

	mu      sync.Mutex // guards the fields below; never held while taking an engine's lock
	now     time.Duration
	clk     clockMap
	running bool
	closed  bool
	srv     *serving
}

// instance is one vLLM server: one port and its engines.
type instance struct {
	cfg     InstanceConfig
	engines []*engine
	fams    []family
	addr    string // set by Start; guarded by Fleet.mu
	// sleepOps are the API server's sleep-mode collectors of a 0.32
	// instance: nil until its first sleep-mode call. Guarded by Fleet.mu.
	sleepOps *sleepOpMetrics
}

// clockMap maps simulated time to wall time: wall0 + (t − sim0)/speed.
type clockMap struct {
	wall0 time.Time
	sim0  time.Duration
	speed float64
}

func (m clockMap) wall(t time.Duration) time.Time {
	return m.wall0.Add(time.Duration(float64(t-m.sim0) / m.speed))
}

// Endpoint describes one instance for scrape configs and tests.
type Endpoint struct {
	Instance   int
	Addr       string // host:port; empty until Start
	Model      string
	Generation Generation
	Engines    []string // engine label values; V0 instances have one engine and no engine label
	Role       string   // prefill, decode, or "" (InstanceConfig.Role)
}

// NewFleet builds a fleet at simulated time 0. Zero values in cfg mean the
// defaults documented on Config and InstanceConfig.
func NewFleet(cfg Config) (*Fleet, error) {
	cfg = cfg.normalized()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, clk: clockMap{wall0: cfg.Epoch, speed: 1}}
	skew := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	for i, ic := range cfg.Instances {
		inst := &instance{cfg: ic, fams: instanceFamilies(ic)}
		for rank := range ic.Engines {
			// Log-normal with mean 1, so skew spreads engines without
			// changing the fleet's mean load.
			mult := math.Exp(cfg.Skew*skew.NormFloat64() - cfg.Skew*cfg.Skew/2)
			e := newEngine(ic, engineSetup{
				instance: i, rank: rank, index: len(f.engines), seed: cfg.Seed,
				rate: cfg.Rate * ic.RateFactor * mult, profile: cfg.Profile,
				preemptionLog: cfg.PreemptionLog, requestLog: cfg.RequestLog, lean: cfg.Lean,
			})
			applyBuckets(e, inst.fams, cfg.HistogramBuckets)
			inst.engines = append(inst.engines, e)
			f.engines = append(f.engines, e)
		}
		for _, e := range inst.engines {
			e.siblings = inst.engines
		}
		f.instances = append(f.instances, inst)
	}
	return f, nil
}

// Config returns the normalized config the fleet runs with.
func (f *Fleet) Config() Config { return f.cfg }

// Advance moves simulated time forward by d without any wall clock. It
// returns ErrRunning while Start's driver is running.
func (f *Fleet) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: cannot advance by negative %v", ErrInvalidConfig, d)
	}
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return ErrRunning
	}
	f.now += d
	until := f.now
	f.mu.Unlock()
	f.advanceParallel(until)
	return nil
}

// advanceParallel spreads the engines over the CPUs. Engines are
// independent, so the result does not depend on the split.
func (f *Fleet) advanceParallel(until time.Duration) {
	workers := min(runtime.GOMAXPROCS(0), len(f.engines))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(f.engines); i += workers {
				f.engines[i].advanceLocked(until)
			}
		})
	}
	wg.Wait()
}

func (e *engine) advanceLocked(until time.Duration) {
	e.mu.Lock()
	e.advanceTo(until)
	e.mu.Unlock()
}

// clock returns the simulated time engines should be at now and the wall
// mapping. While running it follows the wall clock, never going backwards.
func (f *Fleet) clock() (time.Duration, clockMap) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running {
		t := f.clk.sim0 + time.Duration(float64(time.Since(f.clk.wall0))*f.clk.speed)
		f.now = max(f.now, t)
	}
	return f.now, f.clk
}

// Now returns the current simulated time.
func (f *Fleet) Now() time.Duration {
	t, _ := f.clock()
	return t
}

// WallTime maps simulated time t to wall time. Before Start, simulated 0 is
// Config.Epoch and time passes at speed 1; Start re-anchors the mapping so
// that the current simulated time is now.
func (f *Fleet) WallTime(t time.Duration) time.Time {
	_, m := f.clock()
	return m.wall(t)
}

// Endpoints lists the instances, with addresses once started.
func (f *Fleet) Endpoints() []Endpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Endpoint, len(f.instances))
	for i, inst := range f.instances {
		ep := Endpoint{Instance: i, Addr: inst.addr, Model: inst.cfg.Model, Generation: inst.cfg.Generation,
			Role: inst.cfg.Role}
		for rank := range inst.cfg.Engines {
			ep.Engines = append(ep.Engines, strconv.Itoa(rank))
		}
		out[i] = ep
	}
	return out
}

func (f *Fleet) addrs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.instances))
	for i, inst := range f.instances {
		out[i] = inst.addr
	}
	return out
}

// Snapshot returns every engine's true state at the current simulated time.
func (f *Fleet) Snapshot() Snapshot {
	until, m := f.clock()
	addrs := f.addrs()
	s := Snapshot{SimTime: until, Time: m.wall(until), Engines: make([]EngineState, 0, len(f.engines))}
	for _, e := range f.engines {
		e.mu.Lock()
		e.advanceTo(until)
		st := e.state()
		e.mu.Unlock()
		st.Addr = addrs[st.Instance]
		s.Engines = append(s.Engines, st)
	}
	return s
}

// PreemptionEvents returns the logged preemptions of all engines (the newest
// Config.PreemptionLog per engine), ordered by simulated time.
func (f *Fleet) PreemptionEvents() []PreemptionEvent {
	_, m := f.clock()
	addrs := f.addrs()
	var out []PreemptionEvent
	for _, e := range f.engines {
		e.mu.Lock()
		out = e.preemptionLog.appendTo(out)
		e.mu.Unlock()
	}
	for i := range out {
		out[i].Time = m.wall(out[i].SimTime)
		out[i].Addr = addrs[out[i].Instance]
		if out[i].Reported {
			out[i].ReportedTime = m.wall(out[i].ReportedSimTime)
		}
	}
	slices.SortStableFunc(out, func(a, b PreemptionEvent) int { return cmp.Compare(a.SimTime, b.SimTime) })
	return out
}

// CompletedRequests returns the logged finished requests of all engines
// (the newest Config.RequestLog per engine), ordered by finish time.
func (f *Fleet) CompletedRequests() []CompletedRequest {
	var out []CompletedRequest
	for _, e := range f.engines {
		e.mu.Lock()
		out = e.completedLog.appendTo(out)
		e.mu.Unlock()
	}
	slices.SortStableFunc(out, func(a, b CompletedRequest) int { return cmp.Compare(a.Finished, b.Finished) })
	return out
}

// WriteMetrics writes one instance's /metrics exposition at the current
// simulated time.
func (f *Fleet) WriteMetrics(w io.Writer, instance int) error {
	if instance < 0 || instance >= len(f.instances) {
		return fmt.Errorf("%w: %d (fleet has %d)", ErrNoInstance, instance, len(f.instances))
	}
	until, m := f.clock()
	inst := f.instances[instance]
	var buf bytes.Buffer
	// Ranks are locked in order for the whole write, so one scrape sees all
	// ranks at the same simulated time.
	for _, e := range inst.engines {
		e.mu.Lock()
		e.advanceTo(until)
	}
	writeExposition(&buf, inst.fams, inst.engines, m.wall)
	for _, e := range inst.engines {
		e.mu.Unlock()
	}
	f.writeSleepOps(&buf, inst)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("sim: writing metrics of instance %d: %w", instance, err)
	}
	return nil
}

// SetSleep puts every engine of an instance to sleep at level 1 (weights
// offloaded) or 2 (everything discarded), or wakes them with level 0, as
// vLLM's /sleep and /wake_up endpoints do. A sleeping engine gets no
// arrivals and runs no steps; requests it holds stay where they are and
// continue after waking. vllm:engine_sleep_state shows the level.
func (f *Fleet) SetSleep(instance, level int) error {
	if instance < 0 || instance >= len(f.instances) {
		return fmt.Errorf("%w: %d (fleet has %d)", ErrNoInstance, instance, len(f.instances))
	}
	if level < 0 || level > 2 {
		return fmt.Errorf("%w: sleep level %d is not 0, 1 or 2", ErrInvalidConfig, level)
	}
	until, _ := f.clock()
	for _, e := range f.instances[instance].engines {
		e.mu.Lock()
		e.advanceTo(until)
		e.sleepLevel = level
		if level == 0 && !e.busy {
			e.startStep()
		}
		e.mu.Unlock()
	}
	f.recordSleepOp(f.instances[instance], level)
	return nil
}

// recordSleepOp counts one sleep-mode call on a 0.32 instance, creating its
// collectors at the first (vLLM creates them at the first sleep-mode request).
func (f *Fleet) recordSleepOp(inst *instance, level int) {
	if inst.cfg.Release != Release032 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inst.sleepOps == nil {
		inst.sleepOps = &sleepOpMetrics{}
	}
	inst.sleepOps.record(sleepOperation(level), 0)
}

// writeSleepOps appends the instance's sleep-mode families, if created,
// after the engine families (they are registered later in vLLM too).
func (f *Fleet) writeSleepOps(buf *bytes.Buffer, inst *instance) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if inst.sleepOps != nil {
		inst.sleepOps.write(buf)
	}
}

// Sleeping reports whether any engine of the instance is asleep.
func (f *Fleet) Sleeping(instance int) (bool, error) {
	if instance < 0 || instance >= len(f.instances) {
		return false, fmt.Errorf("%w: %d (fleet has %d)", ErrNoInstance, instance, len(f.instances))
	}
	asleep := false
	for _, e := range f.instances[instance].engines {
		e.mu.Lock()
		asleep = asleep || e.sleepLevel != 0
		e.mu.Unlock()
	}
	return asleep, nil
}

// Wedge wedges every engine of an instance now, as a hung worker or a
// stuck collective would (see EngineParams.WedgeAfter): /metrics and
// /health keep answering, arrivals keep queueing, but no step runs again.
// The true instant is EngineState.WedgedAt. Wedging a wedged engine keeps
// its first instant.
func (f *Fleet) Wedge(instance int) error {
	if instance < 0 || instance >= len(f.instances) {
		return fmt.Errorf("%w: %d (fleet has %d)", ErrNoInstance, instance, len(f.instances))
	}
	until, _ := f.clock()
	for _, e := range f.instances[instance].engines {
		e.mu.Lock()
		e.advanceTo(until)
		if !e.wedged {
			e.wedge()
		}
		e.mu.Unlock()
	}
	return nil
}
