package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// withEngine returns the fleet engine defaults changed by mutate.
func withEngine(mutate func(*EngineParams)) *EngineParams {
	p := DefaultEngineParams()
	mutate(&p)
	return &p
}

// featureFleet has every opt-in feature of generation gen on: for V1 an
// instance with speculative decoding and LoRA, a prefill and a decode
// instance; for V0 (which models none of them) a plain instance.
func featureFleet(t testing.TB, gen Generation) *Fleet {
	t.Helper()
	if gen == V0 {
		return newTestFleet(t, nil, InstanceConfig{Model: "m", Generation: V0})
	}
	return newTestFleet(t, nil,
		InstanceConfig{Model: "m", Release: Release032, Engine: withEngine(func(p *EngineParams) { p.SpecTokens, p.LoRAAdapters = 3, 6 })},
		InstanceConfig{Model: "m", Release: Release032, Engine: withEngine(func(p *EngineParams) {
			p.SchedulingPolicy, p.PriorityMix = PolicyPriority, PriorityMix{{-1, 1}, {0, 1}, {2, 1}}
		})},
		InstanceConfig{Model: "m", Role: RolePrefill},
		InstanceConfig{Model: "m", Role: RoleDecode},
		// KV offloading: a tier that loads what a small GPU evicted, and a
		// tier too small for a prompt, whose stores fail.
		InstanceConfig{Model: "m", Engine: offloadEngine(1, 600, 16)},
		InstanceConfig{Model: "m", Engine: offloadEngine(0.02, 600, 16)})
}

// scrapeAll merges the families of every instance's exposition.
func scrapeAll(t testing.TB, f *Fleet) scraped {
	t.Helper()
	out := scraped{families: map[string]*familyView{}}
	for i := range f.Endpoints() {
		s := scrape(t, f, i)
		out.text += s.text
		for name, fv := range s.families {
			if have, ok := out.families[name]; ok {
				have.series = append(have.series, fv.series...)
				continue
			}
			out.families[name] = fv
		}
	}
	return out
}

// familiesWithPrefix lists the exposed families whose name starts with p.
func (s scraped) familiesWithPrefix(p string) []string {
	var out []string
	for name := range s.families {
		if strings.HasPrefix(name, p) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

var (
	specNames = []string{"vllm:spec_decode_num_accepted_tokens_per_pos_total", "vllm:spec_decode_num_accepted_tokens_total",
		"vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_drafts_total"}
	nixlNames = []string{"vllm:nixl_bytes_transferred", "vllm:nixl_num_descriptors", "vllm:nixl_num_failed_notifications_total",
		"vllm:nixl_num_failed_transfers_total", "vllm:nixl_num_kv_expired_reqs_total", "vllm:nixl_post_time_seconds",
		"vllm:nixl_xfer_time_seconds"}
)

// TestOptInFamilies checks that each feature registers exactly its
// families, and that they match the reference table's type, labels and
// buckets.
func TestOptInFamilies(t *testing.T) {
	cat := loadCatalogue(t)
	tests := []struct {
		name       string
		inst       InstanceConfig
		spec, nixl bool
		lora       bool
	}{
		{"default", InstanceConfig{Model: "m"}, false, false, false},
		{"errors only", InstanceConfig{Model: "m", Engine: withEngine(func(p *EngineParams) { p.ErrorRate = 0.1 })}, false, false, false},
		{"speculative decoding", InstanceConfig{Model: "m", Engines: 2, Engine: withEngine(func(p *EngineParams) { p.SpecTokens = 4 })}, true, false, false},
		{"lora", InstanceConfig{Model: "m", Engines: 2, Engine: withEngine(func(p *EngineParams) { p.LoRAAdapters = 5 })}, false, false, true},
		{"prefill", InstanceConfig{Model: "m", Role: RolePrefill}, false, true, false},
		{"decode", InstanceConfig{Model: "m", Role: RoleDecode, Engines: 2}, false, true, false},
		{"v0 ignores spec and lora", InstanceConfig{Model: "m", Generation: V0,
			Engine: withEngine(func(p *EngineParams) { p.SpecTokens, p.LoRAAdapters = 2, 3 })}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, tt.inst)
			require.NoError(t, f.Advance(2*time.Minute))
			got := scrape(t, f, 0)
			require.Equal(t, tt.spec, len(got.familiesWithPrefix("vllm:spec_decode_")) > 0)
			if tt.spec {
				require.Equal(t, specNames, got.familiesWithPrefix("vllm:spec_decode_"))
			}
			require.Equal(t, tt.nixl, len(got.familiesWithPrefix("vllm:nixl_")) > 0)
			if tt.nixl {
				require.Equal(t, nixlNames, got.familiesWithPrefix("vllm:nixl_"))
			}
			_, hasLoRA := got.families["vllm:lora_requests_info"]
			require.Equal(t, tt.lora || tt.inst.Generation == V0, hasLoRA)
			gen := tt.inst.Generation
			if gen == "" {
				gen = V1
			}
			for name, fv := range got.families {
				row, ok := cat[name]
				require.True(t, ok, "%s is not in the catalogue", name)
				checkFamily(t, row, fv, gen, max(1, tt.inst.Engines), false)
			}
		})
	}
}

// TestSpecDecodeCountersAndAcceptance runs a busy speculating engine and
// compares the counters with the truth and the per-position acceptance
// with a^(i+1).
func TestSpecDecodeCountersAndAcceptance(t *testing.T) {
	tests := []struct {
		name string
		k    int
		a    float64
	}{
		{"k=3 a=0.7", 3, 0.7},
		{"k=5 a=0.5", 5, 0.5},
		{"k=2 a=0.95", 2, 0.95},
		{"k=1 a=0", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engines: 2,
				Engine: withEngine(func(p *EngineParams) { p.SpecTokens, p.SpecAcceptance = tt.k, tt.a })})
			require.NoError(t, f.Advance(10*time.Minute))
			got := scrape(t, f, 0)
			for _, st := range f.Snapshot().Engines {
				e := map[string]string{"engine": strconv.Itoa(st.Engine)}
				require.Greater(t, st.SpecDrafts, int64(5000))
				require.Equal(t, float64(st.SpecDrafts), got.value(t, "vllm:spec_decode_num_drafts_total", e))
				require.Equal(t, float64(st.SpecDraftTokens), got.value(t, "vllm:spec_decode_num_draft_tokens_total", e))
				require.Equal(t, float64(st.SpecAcceptedTokens), got.value(t, "vllm:spec_decode_num_accepted_tokens_total", e))
				require.Equal(t, st.SpecDrafts*int64(tt.k), st.SpecDraftTokens)
				require.Len(t, st.SpecAcceptedPerPos, tt.k)
				var sum int64
				for i, n := range st.SpecAcceptedPerPos {
					pos := map[string]string{"engine": e["engine"], "position": strconv.Itoa(i)}
					require.Equal(t, float64(n), got.value(t, "vllm:spec_decode_num_accepted_tokens_per_pos_total", pos))
					rate := float64(n) / float64(st.SpecDrafts)
					require.InDelta(t, math.Pow(tt.a, float64(i+1)), rate, 0.02, "position %d", i)
					sum += n
				}
				require.Equal(t, st.SpecAcceptedTokens, sum)
			}
		})
	}
}

// TestSpecDecodeEmitsMoreTokensPerStep checks that speculation makes
// decoding faster: the same load finishes requests sooner.
func TestSpecDecodeEmitsMoreTokensPerStep(t *testing.T) {
	meanTPOT := func(spec int) float64 {
		f := newTestFleet(t, func(c *Config) { c.Skew = 0 }, InstanceConfig{Model: "m",
			Engine: withEngine(func(p *EngineParams) { p.SpecTokens, p.SpecAcceptance = spec, 0.8 })})
		require.NoError(t, f.Advance(5*time.Minute))
		fv := scrape(t, f, 0).families["vllm:request_time_per_output_token_seconds"]
		return fv.series[0].sum / float64(fv.series[0].count)
	}
	require.Less(t, meanTPOT(3), 0.6*meanTPOT(0))
}

// TestErrorFinishes checks that error finishes reach request_success and
// the finished-request histograms, counted exactly.
func TestErrorFinishes(t *testing.T) {
	tests := []struct {
		name string
		rate float64
	}{
		{"no errors", 0},
		{"some errors", 0.05},
		{"all errors", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, InstanceConfig{Model: "m",
				Engine: withEngine(func(p *EngineParams) { p.ErrorRate = tt.rate })})
			require.NoError(t, f.Advance(5*time.Minute))
			got := scrape(t, f, 0)
			st := f.Snapshot().Engines[0]
			var finished int64
			for _, reason := range reasonNames {
				n := st.FinishedByReason[reason]
				finished += n
				require.Equal(t, float64(n), got.value(t, "vllm:request_success_total", map[string]string{"finished_reason": reason}))
			}
			require.Equal(t, st.Completed-st.Aborted, finished)
			require.Equal(t, tt.rate > 0, st.FinishedByReason["error"] > 0)
			if tt.rate == 1 {
				require.Equal(t, finished, st.FinishedByReason["error"])
			}
			for _, h := range []string{"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
				"vllm:request_generation_tokens", "vllm:request_time_per_output_token_seconds"} {
				require.Equal(t, uint64(finished), got.families[h].series[0].count, h)
			}
			errs := 0
			for _, c := range f.CompletedRequests() {
				if c.Reason == "error" {
					errs++
					require.Positive(t, c.OutputTokens)
				}
			}
			require.Equal(t, tt.rate > 0, errs > 0)
		})
	}
}

// TestLoRABatchNeverExceedsMaxLoRAs steps a LoRA engine one step at a time
// and checks the batch's distinct adapters after every step.
func TestLoRABatchNeverExceedsMaxLoRAs(t *testing.T) {
	tests := []struct {
		name          string
		adapters, max int
	}{
		{"more adapters than slots", 8, 2},
		{"one slot", 5, 1},
		{"slots to spare", 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) { c.Rate = 12 }, InstanceConfig{Model: "m",
				Engine: withEngine(func(p *EngineParams) { p.LoRAAdapters, p.MaxLoRAs = tt.adapters, tt.max })})
			e := f.engines[0]
			sawDeferred, sawFull := false, false
			for range 6000 { // 60 s in 10 ms steps: at most one engine step each
				require.NoError(t, f.Advance(10*time.Millisecond))
				e.mu.Lock()
				distinct := map[int]bool{}
				for _, r := range e.running {
					distinct[r.adapter] = true
				}
				sawDeferred = sawDeferred || e.numDeferred() > 0
				sawFull = sawFull || len(distinct) == tt.max
				e.mu.Unlock()
				require.LessOrEqual(t, len(distinct), tt.max)
			}
			st := f.Snapshot().Engines[0]
			require.LessOrEqual(t, len(st.LoRARunning), tt.max)
			require.True(t, slices.IsSorted(st.LoRARunning) && slices.IsSorted(st.LoRAWaiting))
			require.Equal(t, tt.max, st.MaxLoRAs)
			require.Equal(t, tt.adapters > tt.max, sawDeferred, "requests deferred for the LoRA budget")
			require.Equal(t, tt.adapters >= tt.max, sawFull)
		})
	}
}

// TestLoRAInfoSeries checks vllm:lora_requests_info: one series per label
// set seen, both adapter labels alike (vLLM's LoRARequestStates), value
// the unix time the set was last current, never in the future.
func TestLoRAInfoSeries(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engines: 2,
		Engine: withEngine(func(p *EngineParams) { p.LoRAAdapters, p.MaxLoRAs = 6, 3 })})
	require.NoError(t, f.Advance(3*time.Minute))
	got := scrape(t, f, 0)
	fv := got.families["vllm:lora_requests_info"]
	require.NotNil(t, fv)
	require.Greater(t, len(fv.series), 1)
	now := float64(f.WallTime(f.Now()).UnixNano()) / 1e9
	start := float64(testEpoch.Unix())
	names := map[string]bool{}
	for _, sv := range fv.series {
		require.Equal(t, "3", sv.labels["max_lora"])
		require.Equal(t, sv.labels["running_lora_adapters"], sv.labels["waiting_lora_adapters"])
		require.NotContains(t, sv.labels, "model_name")
		require.NotContains(t, sv.labels, "engine")
		require.LessOrEqual(t, sv.value, now)
		require.Greater(t, sv.value, start)
		if sv.labels["running_lora_adapters"] == "" {
			continue
		}
		for _, n := range strings.Split(sv.labels["running_lora_adapters"], ",") {
			require.Regexp(t, `^adapter-[0-5]$`, n)
			require.False(t, names[n+"|"+sv.labels["running_lora_adapters"]], "%s listed twice", n)
			names[n], names[n+"|"+sv.labels["running_lora_adapters"]] = true, true
		}
	}
	require.True(t, names["adapter-0"], "the hottest adapter shows up")
	require.Contains(t, got.text, `running_lora_adapters="adapter-`)
}

// TestKVTransfers checks the NIXL counters against the truth and the
// injected failures, for both load-failure policies.
func TestKVTransfers(t *testing.T) {
	tests := []struct {
		name, policy string
		inject       int
		wantErrors   func(injected int64) int64
	}{
		{"fail policy", KVLoadFail, 7, func(n int64) int64 { return n }},
		{"recompute policy", KVLoadRecompute, 7, func(int64) int64 { return 0 }},
		{"nothing injected", "", 0, func(int64) int64 { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, InstanceConfig{Model: "m", Role: RoleDecode, Engines: 2,
				Engine: withEngine(func(p *EngineParams) { p.KVLoadFailurePolicy, p.KVNotifyFailRate = tt.policy, 0.05 })})
			require.NoError(t, f.Advance(time.Minute))
			if tt.inject > 0 {
				require.NoError(t, f.FailKVTransfers(0, tt.inject))
			}
			require.NoError(t, f.Advance(time.Minute))
			got := scrape(t, f, 0)
			var failures int64
			for _, st := range f.Snapshot().Engines {
				e := map[string]string{"engine": strconv.Itoa(st.Engine)}
				require.Equal(t, RoleDecode, st.Role)
				require.Positive(t, st.KVTransfers)
				failures += st.KVTransferFailures
				require.Equal(t, float64(st.KVTransferFailures), got.value(t, "vllm:nixl_num_failed_transfers_total", e))
				require.Equal(t, float64(st.KVNotificationFailures), got.value(t, "vllm:nixl_num_failed_notifications_total", e))
				require.Equal(t, float64(tt.wantErrors(st.KVTransferFailures)),
					got.value(t, "vllm:request_success_total", map[string]string{"engine": e["engine"], "finished_reason": "error"}))
				xfer := seriesOf(t, got, "vllm:nixl_xfer_time_seconds", e["engine"])
				require.Equal(t, uint64(st.KVTransfers), xfer.count)
				require.Equal(t, float64(st.KVBytes), seriesOf(t, got, "vllm:nixl_bytes_transferred", e["engine"]).sum)
				require.Equal(t, float64(st.ExternalPrefixQueries), got.value(t, "vllm:external_prefix_cache_queries_total", e))
				require.Equal(t, float64(st.ExternalPrefixHits), got.value(t, "vllm:external_prefix_cache_hits_total", e))
				require.Greater(t, st.ExternalPrefixHits, st.ExternalPrefixQueries/2)
				require.Equal(t, float64(st.PrefixQueries), got.value(t, "vllm:prefix_cache_queries_total", e))
				require.Equal(t, float64(st.PrefixHits), got.value(t, "vllm:prefix_cache_hits_total", e))
				ext := got.value(t, "vllm:prompt_tokens_by_source_total", map[string]string{"engine": e["engine"], "source": "external_kv_transfer"})
				// Pulled tokens count as a source with the first token, a step
				// or more after the bytes arrive.
				extBytes := ext * float64(DefaultEngineParams().KVBytesPerToken)
				require.LessOrEqual(t, extBytes, float64(st.KVBytes))
				require.InEpsilon(t, float64(st.KVBytes), extBytes, 0.05)
				require.Zero(t, got.value(t, "vllm:nixl_num_kv_expired_reqs_total", e), "expiry is counted on prefill instances")
			}
			require.Equal(t, int64(tt.inject), failures)
		})
	}
}

// seriesOf returns the series of family for one engine.
func seriesOf(t *testing.T, s scraped, family, engine string) seriesView {
	t.Helper()
	for _, sv := range s.families[family].series {
		if sv.labels["engine"] == engine {
			return sv
		}
	}
	t.Fatalf("no %s series for engine %s", family, engine)
	return seriesView{}
}

// TestPrefillInstances checks the prefill side: one token per request,
// KV expiry by rate and on command, no transfers.
func TestPrefillInstances(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Role: RolePrefill,
		Engine: withEngine(func(p *EngineParams) { p.KVExpireRate = 0.02 })})
	require.NoError(t, f.Advance(2*time.Minute))
	byRate := f.Snapshot().Engines[0].KVExpired
	require.Positive(t, byRate)
	require.NoError(t, f.ExpireKV(0, 3))
	got := scrape(t, f, 0)
	st := f.Snapshot().Engines[0]
	require.Equal(t, byRate+3, st.KVExpired)
	require.Equal(t, float64(st.KVExpired), got.value(t, "vllm:nixl_num_kv_expired_reqs_total", nil))
	require.Zero(t, st.KVTransfers)
	require.Zero(t, got.families["vllm:nixl_xfer_time_seconds"].series[0].count)
	gen := got.families["vllm:request_generation_tokens"].series[0]
	require.Equal(t, float64(gen.count), gen.sum, "one output token a request")
	require.Positive(t, st.FinishedByReason["length"])
	require.Zero(t, st.FinishedByReason["stop"])
}

// TestKVCommandErrors checks the commands' argument and role checks and
// their HTTP routes.
func TestKVCommandErrors(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Role: RolePrefill}, InstanceConfig{Model: "m", Role: RoleDecode},
		InstanceConfig{Model: "m"})
	tests := []struct {
		name, path string
		instance   int
		status     int
	}{
		{"fail on decode", "/debug/kv-transfer-fail?count=2", 1, http.StatusOK},
		{"fail default count", "/debug/kv-transfer-fail", 1, http.StatusOK},
		{"fail on prefill", "/debug/kv-transfer-fail?count=2", 0, http.StatusBadRequest},
		{"fail without role", "/debug/kv-transfer-fail", 2, http.StatusBadRequest},
		{"bad count", "/debug/kv-transfer-fail?count=0", 1, http.StatusBadRequest},
		{"expire on prefill", "/debug/kv-expire?count=4", 0, http.StatusOK},
		{"expire on decode", "/debug/kv-expire", 1, http.StatusBadRequest},
		{"no such instance", "/debug/kv-expire", 7, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			f.Handler(tt.instance).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, tt.path, nil))
			require.Equal(t, tt.status, rec.Code, rec.Body.String())
		})
	}
	require.Equal(t, 3, f.engines[1].kv.forced)
	require.Equal(t, int64(4), f.Snapshot().Engines[0].KVExpired)
	require.ErrorIs(t, f.FailKVTransfers(0, 1), ErrInvalidConfig)
	require.ErrorIs(t, f.ExpireKV(9, 1), ErrNoInstance)
}

// TestDecodeTransferShapesLatency checks that a decode instance's queue
// time and TTFT include the transfer, that its requests compute one prompt
// token each, and that transfers defer waiting requests.
func TestDecodeTransferShapesLatency(t *testing.T) {
	slow := withEngine(func(p *EngineParams) { p.KVTransferBase = 400 * time.Millisecond })
	f := newTestFleet(t, func(c *Config) { c.Skew = 0 }, InstanceConfig{Model: "m", Role: RoleDecode, Engine: slow})
	require.NoError(t, f.Advance(2*time.Minute))
	got := scrape(t, f, 0)
	queue := got.families["vllm:request_queue_time_seconds"].series[0]
	require.Greater(t, queue.sum/float64(queue.count), 0.4)
	bySource := func(src string) float64 {
		return got.value(t, "vllm:prompt_tokens_by_source_total", map[string]string{"source": src})
	}
	st := f.Snapshot().Engines[0]
	requests := st.FinishedByReason["stop"] + st.FinishedByReason["length"]
	require.InDelta(t, float64(requests), bySource("local_compute"), float64(int64(st.Running)+st.Aborted+2))
	require.Equal(t, float64(st.PromptTokens), bySource("local_compute")+bySource("local_cache_hit")+bySource("external_kv_transfer"))
	require.Equal(t, got.value(t, "vllm:prompt_tokens_cached_total", nil), bySource("local_cache_hit")+bySource("external_kv_transfer"))
	require.Equal(t, float64(st.Waiting), got.value(t, "vllm:num_requests_waiting", nil))
	require.Equal(t, float64(st.KVTransferring),
		got.value(t, "vllm:num_requests_waiting_by_reason", map[string]string{"reason": "deferred"})-float64(readyCount(f)))
}

func readyCount(f *Fleet) int {
	e := f.engines[0]
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kv.ready.len()
}

// TestFeaturesDeterministic runs the feature fleet twice with one seed and
// once with another.
func TestFeaturesDeterministic(t *testing.T) {
	run := func(seed uint64, chop time.Duration) string {
		f := newTestFleet(t, func(c *Config) { c.Seed = seed },
			InstanceConfig{Model: "m", Engine: withEngine(func(p *EngineParams) {
				p.SpecTokens, p.LoRAAdapters, p.ErrorRate = 3, 5, 0.02
			})},
			InstanceConfig{Model: "m", Role: RoleDecode, Engine: withEngine(func(p *EngineParams) { p.KVTransferFailRate = 0.03 })})
		for elapsed := time.Duration(0); elapsed < 3*time.Minute; elapsed += chop {
			require.NoError(t, f.Advance(chop))
		}
		var buf bytes.Buffer
		for i := range 2 {
			require.NoError(t, f.WriteMetrics(&buf, i))
		}
		return buf.String()
	}
	a := run(7, time.Minute)
	require.Equal(t, a, run(7, 7*time.Second+500*time.Millisecond), "chopping time differently changes nothing")
	require.NotEqual(t, a, run(8, time.Minute))
}

// TestTargetsWithRoles checks the role target label.
func TestTargetsWithRoles(t *testing.T) {
	eps := []Endpoint{{Addr: "a:1"}, {Addr: "b:2", Role: RoleDecode}, {Addr: "c:3", Role: RolePrefill}, {Addr: "d:4", Role: RoleDecode}}
	tests := []struct {
		name string
		eps  []Endpoint
		want string
	}{
		{"no roles", eps[:1], `[{"targets":["a:1"]}]`},
		{"mixed", eps, `[{"targets":["a:1"]},{"targets":["c:3"],"labels":{"llm_isvc_role":"prefill"}},` +
			`{"targets":["b:2","d:4"],"labels":{"llm_isvc_role":"decode"}}]`},
		{"roles only", eps[1:], `[{"targets":["c:3"],"labels":{"llm_isvc_role":"prefill"}},` +
			`{"targets":["b:2","d:4"],"labels":{"llm_isvc_role":"decode"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := TargetsJSON(tt.eps)
			require.NoError(t, err)
			var compact bytes.Buffer
			require.NoError(t, jsonCompact(&compact, b))
			require.Equal(t, tt.want, compact.String())
		})
	}
}

func jsonCompact(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }

// TestPrefixCountersEqualTruth checks that the prefix-cache counters and
// the prompt-token sources agree with the truth another helper's hit-rate
// test reads.
func TestPrefixCountersEqualTruth(t *testing.T) {
	tests := []struct {
		name string
		inst InstanceConfig
	}{
		{"plain", InstanceConfig{Model: "m", Engines: 2}},
		{"high hit rate", InstanceConfig{Model: "m", Engine: withEngine(func(p *EngineParams) { p.PrefixHitRate = 0.8 })}},
		{"decode", InstanceConfig{Model: "m", Role: RoleDecode}},
		{"prefix caching off", InstanceConfig{Model: "m", Engine: withEngine(func(p *EngineParams) { p.PrefixCaching = false })}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, tt.inst)
			require.NoError(t, f.Advance(3*time.Minute))
			got := scrape(t, f, 0)
			for _, st := range f.Snapshot().Engines {
				e := map[string]string{"engine": strconv.Itoa(st.Engine)}
				src := func(s string) float64 {
					return got.value(t, "vllm:prompt_tokens_by_source_total", map[string]string{"engine": e["engine"], "source": s})
				}
				require.Equal(t, float64(st.PrefixQueries), got.value(t, "vllm:prefix_cache_queries_total", e))
				require.Equal(t, float64(st.PrefixHits), got.value(t, "vllm:prefix_cache_hits_total", e))
				require.Equal(t, float64(st.ExternalPrefixQueries), got.value(t, "vllm:external_prefix_cache_queries_total", e))
				require.Equal(t, float64(st.ExternalPrefixHits), got.value(t, "vllm:external_prefix_cache_hits_total", e))
				require.Equal(t, float64(st.PromptTokens), src("local_compute")+src("local_cache_hit")+src("external_kv_transfer"))
				require.Equal(t, tt.inst.Role == RoleDecode, st.ExternalPrefixHits > 0)
				require.Equal(t, tt.inst.Engine == nil || tt.inst.Engine.PrefixCaching, st.PrefixQueries > 0)
				if st.PrefixQueries > 0 && tt.inst.Role == "" {
					want := DefaultEngineParams().PrefixHitRate
					if tt.inst.Engine != nil {
						want = tt.inst.Engine.PrefixHitRate
					}
					require.InDelta(t, want, float64(st.PrefixHits)/float64(st.PrefixQueries), 0.1)
				}
			}
		})
	}
}
