package sim

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// injectPriority queues a request of priority p as an arrival would.
func (e *engine) injectPriority(prompt, target, p int) *request {
	e.nextID++
	r := &request{id: e.nextID, arrival: e.now, waitStart: e.now, prompt: prompt, numTokens: prompt,
		maxTokens: e.limitMaxTokens, target: target, priority: p}
	e.st.arrivals++
	e.queue(r, false)
	return r
}

func priorityEngine(mutate func(*EngineParams)) *engine {
	return bareEngine(func(p *EngineParams) {
		p.SchedulingPolicy = PolicyPriority
		if mutate != nil {
			mutate(p)
		}
	})
}

// TestPriorityQueueOrder: the waiting queue is served by (priority,
// arrival), lower value first, first come first served within a value, and
// a preemption victim rejoins at its place in that order (vLLM's
// PriorityRequestQueue has no front).
func TestPriorityQueueOrder(t *testing.T) {
	e := priorityEngine(nil)
	low := e.injectPriority(16, 10, 1)
	zeroA := e.injectPriority(16, 10, 0)
	high := e.injectPriority(16, 10, -1)
	e.now = time.Millisecond
	zeroB := e.injectPriority(16, 10, 0)
	require.Equal(t, []*request{high, zeroA, zeroB, low}, e.waiting.appendTo(nil))

	e.queue(zeroA, true) // a victim of priority 0 that arrived first
	require.Equal(t, []*request{high, zeroA, zeroA, zeroB, low}, e.waiting.appendTo(nil))

	f := bareEngine(nil)
	a, b := f.injectPriority(16, 10, 0), f.injectPriority(16, 10, 0)
	f.queue(b, true)
	require.Equal(t, []*request{b, a, b}, f.waiting.appendTo(nil), "fcfs: a victim goes to the front")
}

// TestPriorityPreemptsHighestValue: when blocks run out, the running request
// with the highest priority value goes, the latest arrival among equals,
// however old it is (max(running, key=(priority, arrival_time)) in vLLM's
// scheduler); first come, first served preempts the newest instead.
func TestPriorityPreemptsHighestValue(t *testing.T) {
	tests := []struct {
		name       string
		policy     string
		priorities [3]int
		victim     int // index into the injected requests
	}{
		{"priority: the oldest request has the highest value", PolicyPriority, [3]int{1, -1, 0}, 0},
		{"priority: equal values, the latest arrival", PolicyPriority, [3]int{0, 0, 0}, 2},
		{"priority: the newest has the lowest value", PolicyPriority, [3]int{0, 1, -1}, 1},
		{"fcfs: the newest", PolicyFCFS, [3]int{0, 0, 0}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := bareEngine(func(p *EngineParams) {
				p.NumGPUBlocks, p.MaxNumSeqs, p.SchedulingPolicy = 10, 8, tt.policy
			})
			var reqs []*request
			for i, p := range tt.priorities {
				e.now = time.Duration(i) * time.Microsecond
				reqs = append(reqs, e.injectPriority(48, 100, p)) // 3 blocks each, 9 of 10 used
			}
			e.now = 0
			e.startStep()
			require.Len(t, e.running, 3)
			e.advanceTo(10 * time.Millisecond)
			require.Equal(t, 1, e.waiting.len())
			require.Same(t, reqs[tt.victim], e.waiting.front())
			require.Equal(t, 1, reqs[tt.victim].preemptions)
			require.NotContains(t, e.running, reqs[tt.victim])
			require.Len(t, e.running, 2)
		})
	}
}

// loadedPriorityFleet runs one engine near saturation with three priority
// classes in equal shares.
func loadedPriorityFleet(t *testing.T, policy string, mix PriorityMix, release string) *Fleet {
	f := newTestFleet(t, func(c *Config) {
		c.Rate, c.RequestLog = 2.6, 100000
		c.Engine.MaxNumSeqs = 8
		c.Engine.SchedulingPolicy, c.Engine.PriorityMix = policy, mix
	}, InstanceConfig{Model: "m", Release: release})
	require.NoError(t, f.Advance(30*time.Minute))
	return f
}

// TestPriorityServesLowerValuesFirst: under load, requests of priority -1
// wait far less than those of priority 0, which wait less than those of
// priority 1, as the log's true queue times show.
func TestPriorityServesLowerValuesFirst(t *testing.T) {
	f := loadedPriorityFleet(t, PolicyPriority, PriorityMix{{-1, 1}, {0, 1}, {1, 1}}, "")
	mean := map[int]float64{}
	n := map[int]int{}
	for _, r := range f.CompletedRequests() {
		if r.Arrival > 5*time.Minute { // past the start-up
			mean[r.Priority] += r.QueueTime.Seconds()
			n[r.Priority]++
		}
	}
	for p := range mean {
		require.Greater(t, n[p], 300, "priority %d finished requests", p)
		mean[p] /= float64(n[p])
	}
	require.Greater(t, mean[1], 1.0, "the load queues the lowest class (mean wait %v s)", mean[1])
	require.Less(t, mean[-1]*1.5, mean[0], "priority -1 %v s, 0 %v s", mean[-1], mean[0])
	require.Less(t, mean[0]*1.5, mean[1], "priority 0 %v s, 1 %v s", mean[0], mean[1])
	t.Logf("mean queue time: priority -1 %.2f s, 0 %.2f s, 1 %.2f s", mean[-1], mean[0], mean[1])
}

// finishedPriorityFamilies are the families vLLM 0.32 labels with priority
// (tests/v1/metrics/test_priority_metrics.py
// test_priority_all_finished_metrics_have_label), as exposed.
var finishedPriorityFamilies = []string{
	"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds", "vllm:request_prefill_time_seconds",
	"vllm:request_inference_time_seconds", "vllm:request_decode_time_seconds", "vllm:request_prompt_tokens",
	"vllm:request_generation_tokens", "vllm:request_prefill_kv_computed_tokens",
	"vllm:request_time_per_output_token_seconds", "vllm:request_params_max_tokens", "vllm:request_num_preemptions",
	"vllm:request_success_total", "vllm:time_to_first_token_seconds",
}

// TestPriorityLabel: a 0.32 engine under the priority policy writes the
// priority label with exactly vLLM's five values on the finished-request
// families and on no other, request_priority with each finished request's
// raw value, and scheduler_policy_info with priority 1. Per class, the
// queue-time histogram counts exactly the log's finished requests.
func TestPriorityLabel(t *testing.T) {
	mix := PriorityMix{{-5, 1}, {-1, 1}, {0, 2}, {1, 1}, {7, 1}}
	f := loadedPriorityFleet(t, PolicyPriority, mix, Release032)
	got := scrape(t, f, 0)
	for name, fv := range got.families {
		values := map[string]bool{}
		for _, s := range fv.series {
			if v, ok := s.labels["priority"]; ok {
				values[v] = true
			}
		}
		if slices.Contains(finishedPriorityFamilies, name) {
			require.ElementsMatch(t, []string{"<-1", "-1", "0", "1", ">1"}, slices.Collect(maps.Keys(values)), name)
			for _, s := range fv.series {
				require.Contains(t, s.labels, "priority", name)
			}
		} else {
			require.Empty(t, values, name)
		}
	}
	perClass := map[string]uint64{}
	var finished, sum uint64
	var sumPriority float64
	for _, r := range f.CompletedRequests() {
		if !r.ClientAborted {
			perClass[PriorityLabel(r.Priority)]++
			finished++
			sumPriority += float64(r.Priority)
		}
	}
	for _, s := range got.families["vllm:request_queue_time_seconds"].series {
		require.Equal(t, perClass[s.labels["priority"]], s.count, s.labels["priority"])
		sum += s.count
	}
	require.Equal(t, finished, sum)
	rp := got.families["vllm:request_priority"]
	require.NotNil(t, rp)
	require.Len(t, rp.series, 1)
	require.Equal(t, finished, rp.series[0].count)
	require.Equal(t, sumPriority, rp.series[0].sum)
	require.Equal(t, requestPriorityBuckets, rp.series[0].bounds)
	require.Equal(t, perClass["<-1"]+perClass["-1"]+perClass["0"], rp.series[0].buckets[0], "le=0.005")
	require.Equal(t, finished-perClass[">1"], rp.series[0].buckets[9], "le=1.0")
	require.Equal(t, finished, rp.series[0].buckets[13], "le=10.0")
	require.Equal(t, 1.0, got.value(t, "vllm:scheduler_policy_info", map[string]string{"policy": "priority"}))
	require.Equal(t, 0.0, got.value(t, "vllm:scheduler_policy_info", map[string]string{"policy": "fcfs"}))
}

// TestPriorityLabelOnlyOn032Priority: first come, first served writes no
// priority label and no request_priority, and neither does an older
// release scheduling by priority (vLLM added them in 0.32).
func TestPriorityLabelOnlyOn032Priority(t *testing.T) {
	tests := []struct {
		name, policy, release string
		mix                   PriorityMix
		wantPolicyInfo        bool
	}{
		{"0.32 fcfs", PolicyFCFS, Release032, nil, true},
		{"older release, priority", PolicyPriority, "", PriorityMix{{-1, 1}, {1, 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) {
				c.Rate = 2
				c.Engine.SchedulingPolicy, c.Engine.PriorityMix = tt.policy, tt.mix
			}, InstanceConfig{Model: "m", Release: tt.release})
			require.NoError(t, f.Advance(2*time.Minute))
			got := scrape(t, f, 0)
			require.NotContains(t, got.families, "vllm:request_priority")
			for name, fv := range got.families {
				for _, s := range fv.series {
					require.NotContains(t, s.labels, "priority", name)
				}
			}
			_, ok := got.families["vllm:scheduler_policy_info"]
			require.Equal(t, tt.wantPolicyInfo, ok)
			if ok {
				require.Equal(t, 1.0, got.value(t, "vllm:scheduler_policy_info", map[string]string{"policy": "fcfs"}))
			}
		})
	}
}

// TestPriorityLabelValues: vLLM's bucket_priority, value for value.
func TestPriorityLabelValues(t *testing.T) {
	for p, want := range map[int]string{-1000: "<-1", -2: "<-1", -1: "-1", 0: "0", 1: "1", 2: ">1", 1000: ">1"} {
		require.Equal(t, want, PriorityLabel(p), "priority %d", p)
	}
}

func TestPriorityMixText(t *testing.T) {
	var m PriorityMix
	require.NoError(t, m.UnmarshalText([]byte("-1:1, 0:3,7:0.5")))
	require.Equal(t, PriorityMix{{-1, 1}, {0, 3}, {7, 0.5}}, m)
	require.Equal(t, "-1:1,0:3,7:0.5", m.String())
	require.NoError(t, m.UnmarshalText(nil))
	require.Empty(t, m)
	for _, bad := range []string{"1", "a:1", "1:0", "1:-2", "1:x", "1.5:1", "1:NaN", "1:Inf"} {
		require.ErrorIs(t, m.UnmarshalText([]byte(bad)), ErrInvalidConfig, bad)
	}
}

// TestPriorityValidation: an unknown policy, priorities other than 0 under
// fcfs (vLLM refuses them), and priority on V0 are configuration errors.
func TestPriorityValidation(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		mix    PriorityMix
		gen    Generation
		ok     bool
	}{
		{"unknown policy", "lifo", nil, V1, false},
		{"fcfs with priorities", PolicyFCFS, PriorityMix{{1, 1}}, V1, false},
		{"fcfs with priority 0 only", "", PriorityMix{{0, 1}}, V1, true},
		{"priority on V0", PolicyPriority, nil, V0, false},
		{"priority on V1", PolicyPriority, PriorityMix{{-3, 1}, {4, 2}}, V1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Engine.SchedulingPolicy, cfg.Engine.PriorityMix = tt.policy, tt.mix
			cfg.Instances = []InstanceConfig{{Model: "m", Generation: tt.gen}}
			f, err := NewFleet(cfg)
			if !tt.ok {
				require.ErrorIs(t, err, ErrInvalidConfig)
				return
			}
			require.NoError(t, err)
			require.NoError(t, f.Close())
		})
	}
}

// TestPriorityConfigFile: the engine keys are the flags' names in snake
// case, per instance too, and a bad mix is a configuration error.
func TestPriorityConfigFile(t *testing.T) {
	c, err := ParseConfig([]byte(`{"instances": [{"model": "m", "release": "0.32",
		"engine": {"scheduling_policy": "priority", "priority_mix": "-1:1,0:3,2:1"}}, {"model": "m"}]}`), DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, PolicyPriority, c.Instances[0].Engine.SchedulingPolicy)
	require.Equal(t, PriorityMix{{-1, 1}, {0, 3}, {2, 1}}, c.Instances[0].Engine.PriorityMix)
	require.Nil(t, c.Instances[1].Engine, "the fleet's engine, first come, first served")
	f, err := NewFleet(c)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = ParseConfig([]byte(`{"engine": {"priority_mix": "-1:x"}}`), DefaultConfig())
	require.ErrorIs(t, err, ErrInvalidConfig)
}
