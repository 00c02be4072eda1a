package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// offloadEngine is a 0.32 engine with a CPU tier of gib GiB (2 MiB blocks)
// whose prompts reuse prefixes of a few shared documents; gpuBlocks sets
// how much of that working set the GPU prefix cache can keep.
func offloadEngine(gib float64, gpuBlocks, docs int) *EngineParams {
	return withEngine(func(p *EngineParams) {
		p.KVOffloadingSize, p.NumGPUBlocks, p.PrefixPopulation = gib, gpuBlocks, docs
		p.PrefixHitRate = 0.9
	})
}

// offloadFamilyNames are the families the tier registers, in order.
var offloadFamilyNames = []string{
	"vllm:kv_offload_total_bytes_total", "vllm:kv_offload_total_time_total", "vllm:kv_offload_size",
	"vllm:kv_offload_cpu_cache_usage_perc", "vllm:kv_offload_cpu_cache_write_usage_perc",
	"vllm:kv_offload_cpu_cache_read_usage_perc", "vllm:kv_offload_load_bytes_total", "vllm:kv_offload_load_time_total",
	"vllm:kv_offload_load_size", "vllm:kv_offload_store_bytes_total", "vllm:kv_offload_store_time_total",
	"vllm:kv_offload_store_size", "vllm:kv_offload_lookup_sync_delay_seconds",
	"vllm:kv_offload_lookup_async_delay_seconds", "vllm:kv_offload_allocation_failure_total",
}

// helpNames lists the families an exposition declares, with or without
// series, in order.
func helpNames(text, prefix string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "# HELP "); ok && strings.HasPrefix(name, prefix) {
			name, _, _ = strings.Cut(name, " ")
			out = append(out, name)
		}
	}
	return out
}

func TestOffloadFamiliesOnlyWithTheFlag(t *testing.T) {
	f := newTestFleet(t, nil,
		InstanceConfig{Model: "plain", Release: Release032},
		InstanceConfig{Model: "off", Engine: offloadEngine(4, 600, 16)})
	t.Run("without --kv-offloading-size: none at all", func(t *testing.T) {
		require.NoError(t, f.Advance(30*time.Second))
		s := scrape(t, f, 0)
		require.Empty(t, helpNames(s.text, "vllm:kv_offload_"))
		require.Contains(t, s.text, `kv_offloading_size="None"`)
	})
	t.Run("with it: every family declared, deprecated ones from the start", func(t *testing.T) {
		fresh := newTestFleet(t, nil, InstanceConfig{Model: "off", Engine: offloadEngine(4, 600, 16)})
		s := scrape(t, fresh, 0)
		require.Equal(t, offloadFamilyNames, helpNames(s.text, "vllm:kv_offload_"))
		require.Contains(t, s.text, `kv_offloading_size="4.0"`)
		require.Equal(t, Release032, fresh.instances[0].cfg.Release, "an instance with offloading is a 0.32 instance")
		require.Zero(t, s.value(t, "vllm:kv_offload_total_bytes_total", map[string]string{"transfer_type": "CPU_to_GPU"}))
		require.Zero(t, s.value(t, "vllm:kv_offload_total_bytes_total", map[string]string{"transfer_type": "GPU_to_CPU"}))
		for _, lazy := range []string{"vllm:kv_offload_store_bytes_total", "vllm:kv_offload_load_bytes_total",
			"vllm:kv_offload_cpu_cache_usage_perc", "vllm:kv_offload_allocation_failure_total",
			"vllm:kv_offload_lookup_sync_delay_seconds", "vllm:prompt_tokens_cached_by_source_total"} {
			require.NotContains(t, s.families, lazy, "created at its first increment")
		}
	})
	t.Run("the deprecated families follow the flat ones", func(t *testing.T) {
		s := scrape(t, f, 1)
		for _, dir := range []struct{ flat, tt string }{{"load", "CPU_to_GPU"}, {"store", "GPU_to_CPU"}} {
			bytesTotal := s.value(t, "vllm:kv_offload_"+dir.flat+"_bytes_total", nil)
			require.Positive(t, bytesTotal, dir.flat)
			require.Equal(t, bytesTotal, s.value(t, "vllm:kv_offload_total_bytes_total", map[string]string{"transfer_type": dir.tt}))
			require.Equal(t, s.value(t, "vllm:kv_offload_"+dir.flat+"_time_total", nil),
				s.value(t, "vllm:kv_offload_total_time_total", map[string]string{"transfer_type": dir.tt}))
		}
	})
}

// TestCachedBySourceAddsUp: the tiers of prompt_tokens_cached_by_source
// add up to prompt_tokens_cached_total, device is prompt_tokens_by_source's
// local_cache_hit and host its external_kv_transfer, and the lookups'
// counters (prefix_cache_hits + external_prefix_cache_hits) equal them
// once the requests still before their first token are set aside.
func TestCachedBySourceAddsUp(t *testing.T) {
	f := newTestFleet(t, nil,
		InstanceConfig{Model: "off", Engine: offloadEngine(4, 600, 16)},
		InstanceConfig{Model: "gpu-only", Release: Release032})
	require.NoError(t, f.Advance(2*time.Minute))
	for i, e := range f.engines {
		s := scrape(t, f, i)
		dev := s.value(t, "vllm:prompt_tokens_cached_by_source_total", map[string]string{"source": "device"})
		host := 0.0
		if i == 0 {
			host = s.value(t, "vllm:prompt_tokens_cached_by_source_total", map[string]string{"source": "host"})
			require.Positive(t, host, "the tier served prompts")
		} else {
			require.Len(t, s.families["vllm:prompt_tokens_cached_by_source_total"].series, 1, "no tier, no host series")
		}
		require.Positive(t, dev)
		require.Equal(t, s.value(t, "vllm:prompt_tokens_cached_total", nil), dev+host)
		require.Equal(t, s.value(t, "vllm:prompt_tokens_by_source_total", map[string]string{"source": "local_cache_hit"}), dev)
		require.Equal(t, s.value(t, "vllm:prompt_tokens_by_source_total", map[string]string{"source": "external_kv_transfer"}), host)
		e.mu.Lock()
		var pending float64
		each := func(r *request) {
			if r.prefixCounted && r.outputs == 0 {
				pending += float64(r.cached)
			}
		}
		for _, r := range e.running {
			each(r)
		}
		e.eachWaiting(each)
		e.mu.Unlock()
		lookups := s.value(t, "vllm:prefix_cache_hits_total", nil) + s.value(t, "vllm:external_prefix_cache_hits_total", nil)
		require.Equal(t, lookups-pending, dev+host, "engine %d", i)
	}
}

// TestHostHitsOnceTheGPUEvicts: with a tier larger than everything the
// test stores, the CPU tier serves prompts only after the GPU prefix cache
// has evicted shared blocks; a GPU that holds the whole working set never
// evicts and never loads from the tier.
func TestHostHitsOnceTheGPUEvicts(t *testing.T) {
	tests := []struct {
		name      string
		gpuBlocks int
		evicts    bool
	}{
		{"GPU smaller than the working set", 600, true},
		{"GPU larger than the working set", 8192, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engine: offloadEngine(64, tt.gpuBlocks, 4)})
			require.NoError(t, f.Advance(90*time.Second))
			st := f.Snapshot().Engines[0]
			require.Zero(t, st.OffloadAllocationFailures, "the tier is larger than all that is stored")
			require.Less(t, st.OffloadCPUBlocksUsed, st.OffloadCPUBlocks)
			require.Positive(t, st.OffloadStoreBytes, "write-through stores run either way")
			e := f.engines[0]
			if !tt.evicts {
				require.Zero(t, st.GPUPrefixEvictions)
				require.Zero(t, st.CachedBySource["host"])
				require.Zero(t, st.OffloadLoadBytes)
				return
			}
			require.Positive(t, st.GPUPrefixEvictions)
			require.Positive(t, st.CachedBySource["host"])
			require.Positive(t, st.OffloadLoadBytes)
			require.GreaterOrEqual(t, e.off.firstHostHit, e.off.firstEvict, "no host hit before the first GPU eviction")
			require.Equal(t, st.OffloadLoadBytes, st.CachedBySource["host"]/16*e.off.blockBytes,
				"every host-hit block was loaded once, 2 MiB a block")
		})
	}
}

// TestTinyTierFailsAllocations: a tier of ten blocks cannot take a prompt's
// blocks, so its stores fail and vllm:kv_offload_allocation_failure_total
// counts them; a large tier never fails and has no such series.
func TestTinyTierFailsAllocations(t *testing.T) {
	f := newTestFleet(t, nil,
		InstanceConfig{Model: "tiny", Engine: offloadEngine(0.02, 600, 16)},
		InstanceConfig{Model: "large", Engine: offloadEngine(64, 600, 16)})
	require.NoError(t, f.Advance(time.Minute))
	snap := f.Snapshot().Engines
	require.Equal(t, 10, snap[0].OffloadCPUBlocks)
	require.Positive(t, snap[0].OffloadAllocationFailures)
	require.Equal(t, float64(snap[0].OffloadAllocationFailures),
		scrape(t, f, 0).value(t, "vllm:kv_offload_allocation_failure_total", nil))
	require.Zero(t, snap[1].OffloadAllocationFailures)
	require.NotContains(t, scrape(t, f, 1).families, "vllm:kv_offload_allocation_failure_total")
}

// TestOffloadIsTheSameHoweverTimeIsChopped: transfers complete at their
// instants, not at the ends of Advance calls.
func TestOffloadIsTheSameHoweverTimeIsChopped(t *testing.T) {
	run := func(chunk time.Duration) string {
		f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engine: offloadEngine(1, 600, 16)})
		for range time.Minute / chunk {
			require.NoError(t, f.Advance(chunk))
		}
		var buf bytes.Buffer
		require.NoError(t, f.WriteMetrics(&buf, 0))
		return buf.String()
	}
	one := run(time.Minute)
	require.Contains(t, one, "vllm:kv_offload_load_bytes_total{")
	require.Equal(t, one, run(75*time.Millisecond)) // 800 chunks, ending mid-step
}

// TestWedgedEngineTransfersNothing: a hung worker completes no transfer,
// so the offload counters stop with the engine.
func TestWedgedEngineTransfersNothing(t *testing.T) {
	p := offloadEngine(1, 600, 16)
	p.WedgeAfter, p.KVOffloadBandwidth = 30*time.Second, 1e8 // slow copies: some in flight at any instant
	f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engine: p})
	require.NoError(t, f.Advance(30*time.Second))
	before := f.Snapshot().Engines[0]
	require.True(t, before.Wedged)
	require.Positive(t, before.OffloadStoreBytes)
	require.NotEmpty(t, f.engines[0].off.jobs, "transfers were in flight when it wedged")
	require.NoError(t, f.Advance(time.Minute))
	after := f.Snapshot().Engines[0]
	require.Equal(t, before.OffloadStoreBytes, after.OffloadStoreBytes)
	require.Equal(t, before.OffloadLoadBytes, after.OffloadLoadBytes)
}

func TestOffloadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		ic   InstanceConfig
		want string
	}{
		{"lmcache", InstanceConfig{Model: "m", Engine: withEngine(func(p *EngineParams) {
			p.KVOffloadingSize, p.KVOffloadingBackend = 1, "lmcache"
		})}, `kv_offloading_backend "lmcache" is not simulated`},
		{"v0", InstanceConfig{Model: "m", Generation: V0, Engine: offloadEngine(1, 600, 4)}, "needs generation v1"},
		{"role", InstanceConfig{Model: "m", Role: RoleDecode, Engine: offloadEngine(1, 600, 4)}, "MultiConnector"},
		{"negative", InstanceConfig{Model: "m", Engine: offloadEngine(-1, 600, 4)}, "must be ≥ 0"},
		{"no prefixes", InstanceConfig{Model: "m", Engine: offloadEngine(1, 600, 0)}, "prefix_population"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Instances = []InstanceConfig{tt.ic}
			_, err := NewFleet(cfg)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrInvalidConfig))
			require.Contains(t, err.Error(), tt.want)
		})
	}
}
