package vllm

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// prefixBuilders are builders whose detection saw each generation's
// prefix-cache names: V1 today, V1 0.7.3–0.11 (older names only, and both
// as 0.9.2–0.11 exported), V0's gauge, a mixed fleet, and nothing at all.
func prefixBuilders() map[string]Builder {
	det := func(names ...string) Detection {
		full := []string{"vllm:num_requests_running"}
		for _, n := range names {
			full = append(full, "vllm:"+n)
		}
		return Detect(full, "vllm:")
	}
	mk := func(d Detection) Builder { return Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: d} }
	return map[string]Builder{
		"undetected": {Prefix: "vllm:", InstanceLabel: "instance"},
		"v1": mk(det("prefix_cache_queries_total", "prefix_cache_hits_total", "external_prefix_cache_queries_total",
			"external_prefix_cache_hits_total", "prompt_tokens_by_source_total")),
		"v1 old":  mk(det("gpu_prefix_cache_queries_total", "gpu_prefix_cache_hits_total")),
		"v1 both": mk(det("prefix_cache_queries_total", "prefix_cache_hits_total", "gpu_prefix_cache_queries_total", "gpu_prefix_cache_hits_total")),
		"v0":      mk(det("gpu_prefix_cache_hit_rate", "num_requests_swapped")),
		"mixed":   mk(det("prefix_cache_queries_total", "prefix_cache_hits_total", "gpu_prefix_cache_hit_rate")),
		"none":    mk(det("kv_cache_usage_perc")),
	}
}

// TestPrefixCacheSignalsParseAndEscape: every expression parses with
// Prometheus' parser for every builder and grouping, and label values
// with quotes and regex characters match exactly themselves.
func TestPrefixCacheSignalsParseAndEscape(t *testing.T) {
	groupings := []models.Grouping{models.GroupNone, models.GroupModel, models.GroupInstance, models.GroupInstanceEngine}
	for bname, b := range prefixBuilders() {
		for _, g := range groupings {
			for _, v := range nastyValues {
				f := models.Filters{Models: []string{v}, Instances: []string{v, "other"}, Engines: []string{"0"}}
				exprs := map[string]string{"fleet": b.FleetSignals(f, "1m0s", "5m")[len(b.FleetSignals(f, "1m0s", "5m"))-1].Expr}
				for _, s := range b.PrefixCacheSignals(g, f, "1m0s") {
					exprs[s.Name] = s.Expr
				}
				for _, s := range b.SaturationSignals(g, f, 60e9) {
					if strings.HasPrefix(s.Name, "prefix") {
						exprs["saturation "+s.Name] = s.Expr
					}
				}
				for name, expr := range exprs {
					t.Run(bname+"/"+string(g)+"/"+name+"/"+v, func(t *testing.T) {
						sels := allSelectors(t, expr)
						require.NotEmpty(t, sels)
						for _, vs := range sels {
							require.True(t, strings.HasPrefix(vs.Name, "vllm:"), vs.Name)
							requireMatchesExactly(t, vs, "model_name", []string{v})
							requireMatchesExactly(t, vs, "instance", []string{v, "other"})
							requireMatchesExactly(t, vs, "engine", []string{"0"})
						}
					})
				}
			}
		}
	}
}

// TestPrefixHitRateNames: the hit rate reads exactly the names the fleet
// exports, unioned across V1's two namings, with V0's gauge where present.
func TestPrefixHitRateNames(t *testing.T) {
	tests := map[string][]string{
		"undetected": {"vllm:gpu_prefix_cache_hit_rate", "vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
		"v1":         {"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
		"v1 old":     {"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total"},
		"v1 both":    {"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
		"v0":         {"vllm:gpu_prefix_cache_hit_rate"},
		"mixed":      {"vllm:gpu_prefix_cache_hit_rate", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
		"none":       {"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
	}
	bs := prefixBuilders()
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			e := bs[name].PrefixHitRate([]string{"instance"}, models.Filters{}, "1m0s", "")
			require.Equal(t, want, metricNames(t, parse(t, e)), e)
		})
	}
}

// TestPrefixHitRateIsRatioOfSums states the hit rate's shape: summed hit
// rates over summed query rates per group (never an average of ratios),
// the denominator filtered to > 0 (no point instead of NaN or Inf), and
// V0's gauge, without its -1 "disabled" value, only as the `or` fallback.
func TestPrefixHitRateIsRatioOfSums(t *testing.T) {
	gl := []string{"instance", "engine"}
	e := parse(t, prefixBuilders()["mixed"].PrefixHitRate(gl, models.Filters{}, "1m0s", ""))
	union, ok := e.(*parser.BinaryExpr)
	require.True(t, ok, e.String())
	require.Equal(t, "or", union.Op.String())

	ratio, ok := unparen(union.LHS).(*parser.BinaryExpr)
	require.True(t, ok, union.LHS.String())
	require.Equal(t, "/", ratio.Op.String())
	num, ok := unparen(ratio.LHS).(*parser.AggregateExpr)
	require.True(t, ok)
	require.Equal(t, "sum", num.Op.String())
	require.Equal(t, gl, num.Grouping)
	require.Equal(t, []string{"vllm:prefix_cache_hits_total"}, metricNames(t, num))
	filter, ok := unparen(ratio.RHS).(*parser.BinaryExpr)
	require.True(t, ok, ratio.RHS.String())
	require.Equal(t, ">", filter.Op.String())
	require.False(t, filter.ReturnBool, "a filter drops the point; bool would keep 0")
	require.Equal(t, "0", filter.RHS.String())
	den, ok := unparen(filter.LHS).(*parser.AggregateExpr)
	require.True(t, ok)
	require.Equal(t, "sum", den.Op.String())
	require.Equal(t, gl, den.Grouping)
	require.Equal(t, []string{"vllm:prefix_cache_queries_total"}, metricNames(t, den))

	v0, ok := unparen(union.RHS).(*parser.AggregateExpr)
	require.True(t, ok, union.RHS.String())
	require.Equal(t, "avg", v0.Op.String())
	require.Equal(t, gl, v0.Grouping)
	ge, ok := unparen(v0.Expr).(*parser.BinaryExpr)
	require.True(t, ok)
	require.Equal(t, ">=", ge.Op.String())
	require.False(t, ge.ReturnBool)
}

// TestPrefixHitRateBeforeIsOffset: the window before reads every selector
// one window back, and the same expression otherwise.
func TestPrefixHitRateBeforeIsOffset(t *testing.T) {
	b := prefixBuilders()["undetected"]
	now := b.PrefixHitRate([]string{"instance"}, models.Filters{}, "2m", "")
	before := b.PrefixHitRate([]string{"instance"}, models.Filters{}, "2m", "2m")
	sels := allSelectors(t, before)
	require.Len(t, sels, len(allSelectors(t, now)))
	for _, vs := range sels {
		require.Equal(t, "2m0s", vs.OriginalOffset.String(), vs.String())
	}
	require.Equal(t, now, strings.ReplaceAll(before, " offset 2m", ""))
}

// TestPrefixCacheSignalsFamilies: the external hit rate and the per-source
// prompt tokens are asked for only where the fleet exports them (or
// detection saw nothing), one expression per source with its matcher.
func TestPrefixCacheSignalsFamilies(t *testing.T) {
	v1 := []string{"hit_rate", "external_hit_rate", "prompt_tokens_local_compute", "prompt_tokens_local_cache_hit", "prompt_tokens_external_kv_transfer"}
	// Undetected, the KV-offload families (offload.go) are asked for too.
	all := append(append([]string(nil), v1...), "cached_tokens_device", "cached_tokens_host", "cached_tokens_p2p", "cached_tokens_disk",
		"cached_tokens_external_unspecified", "offload_load_bytes", "offload_store_bytes", "offload_load_time_share", "offload_store_time_share",
		"offload_allocation_failures")
	tests := map[string][]string{"undetected": all, "v1": v1, "v1 old": {"hit_rate"}, "v0": {"hit_rate"}, "none": {"hit_rate"}}
	bs := prefixBuilders()
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, s := range bs[name].PrefixCacheSignals(models.GroupModel, models.Filters{}, "1m0s") {
				got = append(got, s.Name)
				if src, ok := strings.CutPrefix(s.Name, PromptTokensSignalPrefix); ok {
					vs := allSelectors(t, s.Expr)[0]
					requireMatchesExactly(t, vs, "source", []string{src})
				}
			}
			require.Equal(t, want, got)
		})
	}
}

func TestPrefixCollapsed(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name        string
		now, before float64
		want        bool
	}{
		{"fell by more than half", 0.29, 0.6, true},
		{"fell by exactly half: not below half", 0.3, 0.6, false},
		{"fell a little", 0.5, 0.6, false},
		{"rose", 0.8, 0.6, false},
		{"from below the floor", 0.01, 0.19, false},
		{"from the floor", 0.09, 0.2, true},
		{"to nothing", 0, 0.5, true},
		{"no value now", nan, 0.6, false},
		{"no value before", 0.1, nan, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, PrefixCollapsed(tt.now, tt.before))
		})
	}
}

// TestKVBoundEvidenceNamesPrefixCollapse: a KV-bound range whose hit rate
// collapsed says so in its reason; the verdict is the same either way,
// and other verdicts never mention it.
func TestKVBoundEvidenceNamesPrefixCollapse(t *testing.T) {
	th := models.DefaultSaturation()
	kv := func(now, before float64) SatStep {
		return SatStep{Waiting: 0, Running: 8, RunningPeak: 8, KVUsage: 0.97, Preemptions: 0.5, Completions: 2, Arrivals: 2,
			PrefixHitRate: now, PrefixHitRateBefore: before}
	}
	steady := []SatStep{kv(0.6, 0.6), kv(0.6, 0.6), kv(0.6, 0.6), kv(0.6, 0.6)}
	collapsed := []SatStep{kv(0.6, 0.6), kv(0.4, 0.6), kv(0.1, 0.6), kv(0.05, 0.1)}
	base := Classify(steady, th)
	got := Classify(collapsed, th)
	require.Equal(t, VerdictKVBound, base.Verdict)
	require.Equal(t, base.Verdict, got.Verdict, "evidence never changes the verdict")
	require.Equal(t, base.Steps, got.Steps)
	require.NotContains(t, base.Reason, "prefix-cache")
	require.True(t, strings.HasPrefix(got.Reason, base.Reason), "the clause is added to the KV-bound reason")
	require.Contains(t, got.Reason, "prefix-cache hit rate collapsed beside it (from 60% to 10% over one rate window, in 1 KV-bound steps)")
	require.Contains(t, got.Reason, "more prompt tokens must be computed and held in the KV cache")

	idle := []SatStep{{Running: 0, RunningPeak: 8, PrefixHitRate: 0.01, PrefixHitRateBefore: 0.9}}
	require.NotContains(t, Classify(idle, th).Reason, "prefix-cache")
}

func TestPrefixNoticeTexts(t *testing.T) {
	hit, ext := PrefixFamilies[0], PrefixFamilies[1]
	miss := PrefixMissingText(hit, "ray_vllm:")
	for _, want := range []string{"ray_vllm:prefix_cache_hits_total", "ray_vllm:gpu_prefix_cache_hits_total", "ray_vllm:gpu_prefix_cache_hit_rate",
		"--no-enable-prefix-caching", "--enable-prefix-caching", "the hit rate is not shown"} {
		require.Contains(t, miss, want)
	}
	require.NotContains(t, miss, " vllm:", "the data source's prefix replaces vLLM's own")
	require.Contains(t, PrefixMissingText(ext, "vllm:"), "--kv-transfer-config")
	require.Contains(t, PrefixIdleText(ext, "vllm:", "1m"), "no KV connector is configured")
	require.Contains(t, PrefixIdleText(hit, "vllm:", "1m"), "--no-enable-prefix-caching")
}
