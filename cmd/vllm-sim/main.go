// Command vllm-sim runs a simulated fleet of vLLM engines, each instance
// serving vLLM's exact Prometheus metrics on its own port.
//
//	vllm-sim --instances 4 --engines-per-instance 2 --models m1,m2 --hot 0 --targets-file targets.json
//
// It prints one line per instance:
//
//	instance 127.0.0.1:PORT engines 0,1 model m1 generation v1
//
// (with " role prefill" or " role decode" appended under --roles) and runs until interrupted (or for --duration). See pkg/sim for the model.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/inferops/vllm-datasource/pkg/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "vllm-sim:", err)
		stop() // os.Exit skips deferred calls
		os.Exit(2)
	}
}

// options are the flags that are not part of sim.Config.
type options struct {
	configFile    string
	targetsFile   string
	advertiseHost string
	warmup        time.Duration
	duration      time.Duration
	layout        layout
}

// layout is the flag form of the fleet's instances.
type layout struct {
	instances, enginesPerInstance int
	models                        string
	generation                    sim.Generation
	v0Instances, hot, v032        string
	hotFactor                     float64
	roles                         string
}

// run parses args, starts the fleet, prints its endpoints and serves until
// ctx is done or --duration has passed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, opts, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	fleet, err := sim.NewFleet(cfg)
	if err != nil {
		return err
	}
	defer fleet.Close()
	if err := fleet.Advance(opts.warmup); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if opts.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.duration)
		defer cancel()
	}
	eps, err := fleet.Start(ctx)
	if err != nil {
		return err
	}
	if err := announce(stdout, advertise(eps, opts.advertiseHost), opts.targetsFile); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// advertise replaces the host of each address with the one scrapers should
// use (a container's service name when listening on 0.0.0.0), keeping the
// port; an empty host keeps the listen addresses.
func advertise(eps []sim.Endpoint, host string) []sim.Endpoint {
	if host == "" {
		return eps
	}
	out := make([]sim.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = ep
		if _, port, err := net.SplitHostPort(ep.Addr); err == nil {
			out[i].Addr = net.JoinHostPort(host, port)
		}
	}
	return out
}

// announce prints the endpoints and writes the targets file.
func announce(w io.Writer, eps []sim.Endpoint, targetsFile string) error {
	for _, ep := range eps {
		role := ""
		if ep.Role != "" {
			role = " role " + ep.Role
		}
		if _, err := fmt.Fprintf(w, "instance %s engines %s model %s generation %s%s\n",
			ep.Addr, strings.Join(ep.Engines, ","), ep.Model, ep.Generation, role); err != nil {
			return fmt.Errorf("printing endpoints: %w", err)
		}
	}
	if targetsFile == "" {
		return nil
	}
	return sim.WriteTargetsFile(targetsFile, eps)
}

// parseArgs turns the command line into a fleet config. Flags set the
// defaults; a --config file, when given, overrides whatever it mentions.
func parseArgs(args []string, stderr io.Writer) (sim.Config, options, error) {
	cfg := sim.DefaultConfig()
	var opts options
	fs := flag.NewFlagSet("vllm-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	registerFleetFlags(fs, &cfg, &opts)
	registerEngineFlags(fs, &cfg.Engine)
	if err := fs.Parse(args); err != nil {
		return cfg, opts, err
	}
	if fs.NArg() > 0 {
		return cfg, opts, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	insts, err := opts.layout.expand()
	if err != nil {
		return cfg, opts, err
	}
	cfg.Instances = insts
	if opts.configFile != "" {
		cfg, err = sim.LoadConfigFile(opts.configFile, cfg)
	}
	return cfg, opts, err
}

func registerFleetFlags(fs *flag.FlagSet, cfg *sim.Config, o *options) {
	l := &o.layout
	fs.StringVar(&o.configFile, "config", "", "JSON fleet config; keys it sets override flags (see docs/simulator.md)")
	fs.StringVar(&o.targetsFile, "targets-file", "", "write a Prometheus file_sd targets JSON file here")
	fs.StringVar(&o.advertiseHost, "advertise-host", "", "host written into the printed lines and the targets file instead of the listen address (e.g. the compose service name)")
	fs.DurationVar(&o.warmup, "warmup", 0, "simulate this much time before serving, so metrics start non-empty")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this much wall time (0: run until interrupted)")
	fs.IntVar(&l.instances, "instances", 4, "number of instances (vLLM servers, one port each)")
	fs.IntVar(&l.enginesPerInstance, "engines-per-instance", 1, "data-parallel engines per instance (engine label 0..N-1)")
	fs.StringVar(&l.models, "models", "meta-llama/Llama-3.1-8B-Instruct", "comma-separated models, assigned to instances round-robin")
	l.generation = sim.V1
	fs.TextVar(&l.generation, "generation", sim.V1, "metric generation of every instance: v1 or v0")
	fs.StringVar(&l.v0Instances, "v0-instances", "", "comma-separated instance indexes that expose V0 metrics (a mixed fleet)")
	fs.StringVar(&l.v032, "v032-instances", "", "comma-separated instance indexes that expose vLLM 0.32's families besides "+
		"(admission_rejections_total, request_num_preemptions, scheduler_policy_info); V1 only")
	fs.StringVar(&l.hot, "hot", "", "comma-separated indexes of hot instances")
	fs.Float64Var(&l.hotFactor, "hot-factor", 2, "arrival-rate multiplier of hot instances")
	fs.StringVar(&l.roles, "roles", "", "prefill/decode roles, a comma list applied to the instances cyclically "+
		"(e.g. prefill,decode,decode); empty: no roles. The targets file labels them llm_isvc_role")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "host to listen on")
	fs.IntVar(&cfg.BasePort, "base-port", cfg.BasePort, "port of instance 0, the others follow; 0 picks free ports")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed; the same seed gives the same simulated history")
	fs.Float64Var(&cfg.Speed, "speed", cfg.Speed, "simulated seconds per wall-clock second")
	fs.DurationVar(&cfg.Tick, "tick", cfg.Tick, "how often the engines are advanced to the wall clock")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "mean arrivals per second per engine")
	fs.TextVar(&cfg.Profile, "profile", cfg.Profile, "load profile: steady, ramp:from=F,to=F,over=D, "+
		"bursts:period=D,length=D,factor=F, step:at=D,factor=F, sine:period=D,amplitude=F")
	fs.Float64Var(&cfg.Skew, "skew", cfg.Skew, "sigma of a log-normal per-engine rate multiplier (0: all engines equal)")
	fs.Func("histogram-buckets", "replace a histogram family's buckets: 'family=b1,b2,...' with the family name "+
		"without vllm: (e.g. time_to_first_token_seconds=0.1,0.5,1); repeatable", func(s string) error {
		return parseBuckets(s, cfg)
	})
}

// parseBuckets adds one --histogram-buckets value, family=b1,b2,..., to
// cfg.HistogramBuckets. A "vllm:" prefix on the family is accepted.
func parseBuckets(s string, cfg *sim.Config) error {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimPrefix(strings.TrimSpace(name), "vllm:")
	if !ok || name == "" {
		return fmt.Errorf("want family=b1,b2,..., got %q", s)
	}
	var bounds []float64
	for _, f := range splitList(list) {
		b, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return fmt.Errorf("%s: bound %q: %w", name, f, err)
		}
		bounds = append(bounds, b)
	}
	if len(bounds) == 0 {
		return fmt.Errorf("%s: no bounds", name)
	}
	if cfg.HistogramBuckets == nil {
		cfg.HistogramBuckets = map[string][]float64{}
	}
	cfg.HistogramBuckets[name] = bounds
	return nil
}

func registerEngineFlags(fs *flag.FlagSet, p *sim.EngineParams) {
	fs.IntVar(&p.NumGPUBlocks, "num-gpu-blocks", p.NumGPUBlocks, "KV-cache blocks per engine")
	fs.IntVar(&p.BlockSize, "block-size", p.BlockSize, "tokens per KV block")
	fs.IntVar(&p.MaxNumSeqs, "max-num-seqs", p.MaxNumSeqs, "running requests per engine at most")
	fs.IntVar(&p.MaxNumBatchedTokens, "max-num-batched-tokens", p.MaxNumBatchedTokens, "token budget per step")
	fs.IntVar(&p.MaxModelLen, "max-model-len", p.MaxModelLen, "longest sequence; sets the token histograms' buckets")
	fs.IntVar(&p.MaxTokens, "max-tokens", p.MaxTokens, "requests' max_tokens; longer outputs finish with reason length")
	fs.DurationVar(&p.StepBase, "step-base", p.StepBase, "step time a in a + b·seqs + c·prefill tokens")
	fs.DurationVar(&p.StepPerSeq, "step-per-seq", p.StepPerSeq, "step time b, per sequence in the batch")
	fs.DurationVar(&p.StepPerPrefillToken, "step-per-prefill-token", p.StepPerPrefillToken, "step time c, per prefill token")
	fs.TextVar(&p.PromptTokens, "prompt-tokens", p.PromptTokens, "prompt length distribution: fixed:N, uniform:A,B, lognormal:MEAN,SIGMA, exponential:MEAN")
	fs.TextVar(&p.OutputTokens, "output-tokens", p.OutputTokens, "output length distribution (same forms)")
	fs.BoolVar(&p.PrefixCaching, "prefix-caching", p.PrefixCaching, "enable prefix caching")
	fs.Float64Var(&p.PrefixHitRate, "prefix-hit-rate", p.PrefixHitRate, "mean fraction of a prompt found in the prefix cache")
	fs.Float64Var(&p.AbortRate, "abort-rate", p.AbortRate, "fraction of requests aborted by the client mid-stream")
	fs.IntVar(&p.MaxNumQueuedReqs, "max-num-queued-reqs", p.MaxNumQueuedReqs, "vLLM's admission limit: refuse an arrival "+
		"when waiting + running requests would exceed this (0: no limit)")
	fs.IntVar(&p.MaxNumQueuedTokens, "max-num-queued-tokens", p.MaxNumQueuedTokens, "vLLM's admission limit: refuse an "+
		"arrival while the prompt tokens of requests still in prefill are at least this (0: no limit)")
	fs.IntVar(&p.MaxWaiting, "max-waiting", p.MaxWaiting, "arrivals beyond this queue length are aborted at once (0: unbounded)")
	fs.Float64Var(&p.GPUMemoryUtilization, "gpu-memory-utilization", p.GPUMemoryUtilization, "reported in cache_config_info")
	fs.Float64Var(&p.EngineAbortRate, "engine-abort-rate", p.EngineAbortRate, "fraction of requests the engine itself aborts mid-stream; only these count as finished_reason=\"abort\"")
	fs.BoolVar(&p.ReserveFullISL, "scheduler-reserve-full-isl", p.ReserveFullISL, "admit a waiting request only when its whole prompt fits in free KV blocks (vLLM's default since 2026-03); false: its first chunk is enough")
	fs.Float64Var(&p.MaxTokensSetRate, "max-tokens-set-rate", p.MaxTokensSetRate, "fraction of requests that set max_tokens (the rest get max_model_len minus the prompt and are not observed in request_params_max_tokens)")
	fs.StringVar(&p.SchedulingPolicy, "scheduling-policy", p.SchedulingPolicy, "vLLM's --scheduling-policy: fcfs, or priority (lower priority value served first, the highest value preempted first; V1 only; 0.32 instances label finished requests by priority)")
	fs.TextVar(&p.PriorityMix, "priority-mix", p.PriorityMix, "share of arrivals at each priority, PRIORITY:WEIGHT,… e.g. -1:1,0:3,1:1 (needs --scheduling-policy priority unless every priority is 0)")
	fs.IntVar(&p.SleepLevel, "sleep-level", p.SleepLevel, "engines start asleep at this level (0 awake, 1 weights offloaded, 2 discard all); POST /sleep?level=N and /wake_up change it at run time")
	fs.DurationVar(&p.WedgeAfter, "wedge-after", p.WedgeAfter, "wedge engines this long after the start (simulated time; 0 never): /metrics keeps answering and requests keep queueing, but no step runs (a hung worker); POST /debug/wedge wedges one instance at run time")
	registerFeatureFlags(fs, p)
}

// registerFeatureFlags adds the flags of the opt-in features: errors,
// speculative decoding, LoRA and NIXL KV transfer.
func registerFeatureFlags(fs *flag.FlagSet, p *sim.EngineParams) {
	fs.Float64Var(&p.ErrorRate, "error-rate", p.ErrorRate, "fraction of requests that finish with finished_reason=\"error\" after some output")
	fs.IntVar(&p.SpecTokens, "num-speculative-tokens", p.SpecTokens, "speculative decoding: draft tokens verified per decode step (0: off; V1 only)")
	fs.Float64Var(&p.SpecAcceptance, "spec-acceptance", p.SpecAcceptance, "chance a draft token is accepted given the one before it was (position i: a^(i+1))")
	fs.IntVar(&p.LoRAAdapters, "lora-adapters", p.LoRAAdapters, "LoRA: requests pick one of N adapters adapter-0..N-1, a few hot (0: off; V1 only)")
	fs.IntVar(&p.MaxLoRAs, "max-loras", p.MaxLoRAs, "distinct LoRA adapters in a batch at most")
	fs.DurationVar(&p.KVTransferBase, "kv-transfer-base", p.KVTransferBase, "decode instances: fixed time of one NIXL KV transfer")
	fs.DurationVar(&p.KVTransferPerToken, "kv-transfer-per-token", p.KVTransferPerToken, "decode instances: transfer time per prompt token")
	fs.IntVar(&p.KVBytesPerToken, "kv-bytes-per-token", p.KVBytesPerToken, "KV bytes per token (nixl_bytes_transferred)")
	fs.Float64Var(&p.KVTransferFailRate, "kv-transfer-fail-rate", p.KVTransferFailRate, "decode instances: chance one KV transfer fails; POST /debug/kv-transfer-fail?count=N fails the next N")
	fs.StringVar(&p.KVLoadFailurePolicy, "kv-load-failure-policy", p.KVLoadFailurePolicy, "what a failed KV transfer does to its request: fail (vLLM's default: finished_reason=\"error\") or recompute (prefill locally)")
	fs.Float64Var(&p.KVNotifyFailRate, "kv-notify-fail-rate", p.KVNotifyFailRate, "decode instances: chance the notification after a good transfer fails")
	fs.Float64Var(&p.KVExpireRate, "kv-expire-rate", p.KVExpireRate, "prefill instances: chance a finished request's KV expires unread; POST /debug/kv-expire?count=N adds N")
	fs.Float64Var(&p.KVOffloadingSize, "kv-offloading-size", p.KVOffloadingSize, "vLLM's KV offloading to CPU memory: GiB of host memory for the tier (0: off, vLLM's None); an instance with it exposes vLLM 0.32's families (V1 only, no role)")
	fs.StringVar(&p.KVOffloadingBackend, "kv-offloading-backend", p.KVOffloadingBackend, "KV offloading backend: native (vLLM's OffloadingConnector; lmcache is not simulated)")
	fs.Float64Var(&p.KVOffloadBandwidth, "kv-offload-bandwidth", p.KVOffloadBandwidth, "KV offloading: GPU↔CPU copy rate, bytes per second each way")
	fs.IntVar(&p.PrefixPopulation, "prefix-population", p.PrefixPopulation, "KV offloading: distinct shared prefixes the prompts' cached parts come from (the caches' working set)")
}

// expand turns the layout flags into instance configs.
func (l layout) expand() ([]sim.InstanceConfig, error) {
	if l.instances < 1 || l.enginesPerInstance < 1 {
		return nil, fmt.Errorf("--instances and --engines-per-instance must be ≥ 1")
	}
	models := splitList(l.models)
	if len(models) == 0 {
		return nil, fmt.Errorf("--models is empty")
	}
	v0, err := indexSet("--v0-instances", l.v0Instances, l.instances)
	if err != nil {
		return nil, err
	}
	v032, err := indexSet("--v032-instances", l.v032, l.instances)
	if err != nil {
		return nil, err
	}
	hot, err := indexSet("--hot", l.hot, l.instances)
	if err != nil {
		return nil, err
	}
	roles, err := roleList(l.roles)
	if err != nil {
		return nil, err
	}
	out := make([]sim.InstanceConfig, l.instances)
	for i := range out {
		out[i] = sim.InstanceConfig{Model: models[i%len(models)], Engines: l.enginesPerInstance,
			Generation: l.generation, RateFactor: 1}
		if v0[i] {
			out[i].Generation = sim.V0
		}
		if v032[i] {
			out[i].Release = sim.Release032
		}
		if hot[i] {
			out[i].RateFactor = l.hotFactor
		}
		if len(roles) > 0 {
			out[i].Role = roles[i%len(roles)]
		}
	}
	return out, nil
}

// roleList parses --roles.
func roleList(s string) ([]string, error) {
	roles := splitList(s)
	for _, r := range roles {
		if r != sim.RolePrefill && r != sim.RoleDecode {
			return nil, fmt.Errorf("--roles: %q is not prefill or decode", r)
		}
	}
	return roles, nil
}

func indexSet(flagName, list string, n int) (map[int]bool, error) {
	set := map[int]bool{}
	for _, s := range splitList(list) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("%s: %q is not an instance index in [0, %d)", flagName, s, n)
		}
		set[i] = true
	}
	return set, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
