// Package fleettest starts a simulated vLLM fleet (pkg/sim) and the real
// Prometheus scraping it, for integration tests, and records the fleet's
// true state over time so tests can compare what the plugin reports with
// what really happened.
package fleettest

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// Env is a running fleet, its Prometheus and the recorded history.
type Env struct {
	Fleet     *sim.Fleet
	Prom      *promtest.Server
	Endpoints []sim.Endpoint
	Started   time.Time

	mu      sync.Mutex
	history []sim.Snapshot
}

// HotFleet is the standard test fleet: four V1 instances of two
// data-parallel engines each; instance 0 is hot (four times the arrivals)
// with a tiny KV cache, so it queues and preempts while the others idle.
func HotFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew = seed, 3, 0
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	tiny := cfg.Engine
	tiny.NumGPUBlocks, tiny.MaxNumSeqs = 96, 32
	models := []string{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"}
	for i, m := range models {
		ic := sim.InstanceConfig{Model: m, Engines: 2}
		if i == 0 {
			ic.RateFactor, ic.Engine = 4, &tiny
		}
		cfg.Instances = append(cfg.Instances, ic)
	}
	return cfg
}

// MixedFleet has one V0 instance beside two V1 instances, as during an upgrade.
func MixedFleet(seed uint64) sim.Config {
	cfg := HotFleet(seed)
	cfg.Instances = cfg.Instances[:3]
	cfg.Instances[1].Generation = sim.V0
	cfg.Instances[1].Engines = 1
	return cfg
}

// Start runs the fleet in real time and Prometheus scraping it every
// second, and records a snapshot every 100ms until the test ends.
func Start(t testing.TB, cfg sim.Config) *Env {
	t.Helper()
	return StartWith(t, cfg, promtest.Options{})
}

// StartWith is Start with the back end and scrape options of o; the
// fleet's endpoints are added to o.Targets.
func StartWith(t testing.TB, cfg sim.Config, o promtest.Options) *Env {
	t.Helper()
	env := Run(t, cfg)
	o.Targets = append(o.Targets, env.Targets()...)
	env.Prom = promtest.Start(t, o)
	return env
}

// Run runs the fleet and records its history, without a Prometheus: for
// tests that scrape several fleets with one server.
func Run(t testing.TB, cfg sim.Config) *Env {
	t.Helper()
	f, err := sim.NewFleet(cfg)
	if err != nil {
		t.Fatalf("new fleet: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	eps, err := f.Start(ctx)
	if err != nil {
		cancel()
		t.Fatalf("start fleet: %v", err)
	}
	env := &Env{Fleet: f, Endpoints: eps, Started: time.Now()}
	done := make(chan struct{})
	go env.record(ctx, done)
	t.Cleanup(func() { cancel(); <-done; _ = f.Close() })
	return env
}

// Targets are the fleet's host:port scrape targets.
func (e *Env) Targets() []string {
	out := make([]string, len(e.Endpoints))
	for i, ep := range e.Endpoints {
		out[i] = ep.Addr
	}
	return out
}

// Also starts another back end scraping the same fleet every second, so
// several back ends can be compared against one simulated history.
func (e *Env) Also(t testing.TB, k promtest.Kind) *promtest.Server {
	t.Helper()
	return promtest.Start(t, promtest.Options{Targets: e.Targets(), Backend: k})
}

func (e *Env) record(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s := e.Fleet.Snapshot()
			e.mu.Lock()
			e.history = append(e.history, s)
			e.mu.Unlock()
		}
	}
}

// History returns the recorded snapshots.
func (e *Env) History() []sim.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]sim.Snapshot(nil), e.history...)
}

// WaitingRange returns the least and greatest true queue length of one
// instance (summed over its engines) between from and to.
func (e *Env) WaitingRange(instance int, from, to time.Time) (lo, hi int, ok bool) {
	for _, s := range e.History() {
		if s.Time.Before(from) || s.Time.After(to) {
			continue
		}
		n := 0
		for _, es := range s.Engines {
			if es.Instance == instance {
				n += es.Waiting
			}
		}
		if !ok || n < lo {
			lo = n
		}
		if !ok || n > hi {
			hi = n
		}
		ok = true
	}
	return lo, hi, ok
}

// FirstScrape is the time of Prometheus' first successful scrape of the fleet.
func (e *Env) FirstScrape(t testing.TB) time.Time {
	t.Helper()
	return FirstScrape(t, e.Prom)
}

// FirstScrape is the time of a back end's first successful scrape of the fleet.
func FirstScrape(t testing.TB, p *promtest.Server) time.Time {
	t.Helper()
	var out struct {
		Value [2]any `json:"value"`
	}
	r := p.Query(t, `min(min_over_time(timestamp(vllm:num_requests_running)[10m:1s]))`)
	if len(r) != 1 {
		t.Fatalf("no scrape of the fleet yet")
	}
	if err := json.Unmarshal(r[0], &out); err != nil {
		t.Fatalf("decode first scrape: %v", err)
	}
	s, _ := out.Value[1].(string)
	sec, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parse first scrape %q: %v", s, err)
	}
	return time.Unix(0, int64(sec*1e9))
}

// StallFleet is three single-engine instances for the stall tests: one
// over capacity (the one to wedge), one loaded but slow (1.5 s steps: its
// queue grows, yet every step moves its counters) and one asleep.
func StallFleet(seed uint64) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Rate, cfg.Skew = seed, 4, 0
	cfg.Engine.PromptTokens = sim.Dist{Kind: sim.LogNormal, A: 200, B: 0.5}
	cfg.Engine.OutputTokens = sim.Dist{Kind: sim.LogNormal, A: 80, B: 0.5}
	over, slow, asleep := cfg.Engine, cfg.Engine, cfg.Engine
	over.MaxNumSeqs = 4
	slow.StepBase = 1500 * time.Millisecond
	asleep.SleepLevel = 1
	cfg.Instances = []sim.InstanceConfig{
		{Model: "wedged", RateFactor: 4, Engine: &over},
		{Model: "slow", Engine: &slow},
		{Model: "asleep", Engine: &asleep},
	}
	return cfg
}

// OffloadFleet has two vLLM 0.32 instances with native KV offloading
// (--kv-offloading-size), one engine each at 6 requests/s, whose prompts reuse prefixes of
// 64 shared documents (prefix hit rate 0.9): instance 0's GPU (256 blocks)
// cannot keep that working set, so its 4 GiB tier serves what the GPU
// evicted; instance 1's tier (0.02 GiB, ten 2 MiB blocks) is smaller than
// most prompts, so its stores fail allocation.
func OffloadFleet(seed uint64) sim.Config {
	cfg := HotFleet(seed)
	cfg.Rate = 6
	cfg.Engine.PrefixHitRate, cfg.Engine.PrefixPopulation, cfg.Engine.NumGPUBlocks = 0.9, 64, 256
	roomy, tiny := cfg.Engine, cfg.Engine
	roomy.KVOffloadingSize, tiny.KVOffloadingSize = 4, 0.02
	cfg.Instances = []sim.InstanceConfig{
		{Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: &roomy},
		{Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: &tiny},
	}
	return cfg
}
