package sim

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The project's copy of the vLLM metric catalogue.
const cataloguePath = "../vllm/testdata/reference/vllm-metrics.tsv"

// catalogueRow is one metric of the catalogue, keyed by its exposed family
// name (what a Prometheus text parser reports as the family).
type catalogueRow struct {
	family, typ, labels, buckets, engine, removed string
}

func loadCatalogue(t *testing.T) map[string]catalogueRow {
	t.Helper()
	fh, err := os.Open(cataloguePath)
	require.NoError(t, err)
	defer fh.Close()
	r := csv.NewReader(fh)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	recs, err := r.ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	rows := map[string]catalogueRow{}
	for _, rec := range recs[1:] {
		fam := strings.TrimSuffix(rec[col["exposed_series"]], "_{bucket,sum,count}")
		if !strings.HasPrefix(fam, "vllm:") {
			continue // http_*, python_*: not engine metrics
		}
		typ, _, _ := strings.Cut(rec[col["prometheus_type"]], " ")
		rows[fam] = catalogueRow{family: fam, typ: typ, labels: rec[col["labels"]],
			buckets: rec[col["histogram_buckets"]], engine: rec[col["engine"]], removed: rec[col["removed_in"]]}
	}
	require.Greater(t, len(rows), 50, "catalogue looks truncated")
	return rows
}

// in reports whether the catalogue says generation g had the metric.
func (r catalogueRow) in(g Generation) bool {
	if g == V0 {
		return r.engine == "V0" || r.engine == "both"
	}
	return r.engine == "V1" || r.engine == "both" || strings.HasPrefix(r.engine, "V1 (also")
}

// current reports whether the newest V1 still has the metric.
func (r catalogueRow) current() bool { return r.in(V1) && r.removed == "" }

// optInV1 are families vLLM exposes only when a feature is configured
// (LoRA, speculative decoding, KV connectors, --kv-cache-metrics,
// VLLM_COMPUTE_NANS_IN_LOGITS, priority scheduling) or used (the sleep-mode
// operation families: dev-mode routes, created at the first call).
var optInV1 = []string{"vllm:lora_requests_info", "vllm:kv_block_", "vllm:spec_decode_", "vllm:nixl_",
	"vllm:kv_offload_", "vllm:hf3fs_", "vllm:corrupted_requests", "vllm:request_priority",
	"vllm:sleep_mode_", "vllm:rl_sleep_mode_"}

func optIn(name string) bool {
	return slices.ContainsFunc(optInV1, func(p string) bool { return strings.HasPrefix(name, p) })
}

// release032 are the current V1 families of the table that the simulator
// exposes only for InstanceConfig.Release "0.32" (the reference profile
// predates them).
var release032 = []string{"vllm:admission_rejections_total", "vllm:request_num_preemptions", "vllm:scheduler_policy_info",
	"vllm:prompt_tokens_cached_by_source_total", sleepOpDurationName, sleepOpInFlightName}

// notModelled are current V1 families of the table the simulator does not
// expose, each with why; TestNotModelledIsExact keeps the list exact.
var notModelled = map[string]string{
	"vllm:num_requests_kv_fetch_by_stage": "its stage values were not read from vLLM",
}

// expectedV0 is the V0 profile the simulator models (≈v0.8.4–0.8.5 with
// hidden metrics shown); the test checks each against the catalogue.
var expectedV0 = []string{
	"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:num_requests_swapped",
	"vllm:gpu_cache_usage_perc", "vllm:cpu_cache_usage_perc", "vllm:gpu_prefix_cache_hit_rate",
	"vllm:cpu_prefix_cache_hit_rate", "vllm:num_preemptions_total", "vllm:prompt_tokens_total",
	"vllm:generation_tokens_total", "vllm:iteration_tokens_total", "vllm:request_success_total",
	"vllm:request_prompt_tokens", "vllm:request_generation_tokens", "vllm:request_max_num_generation_tokens",
	"vllm:request_params_n", "vllm:request_params_max_tokens", "vllm:time_to_first_token_seconds",
	"vllm:time_per_output_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
	"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
	"vllm:time_in_queue_requests", "vllm:cache_config_info", "vllm:lora_requests_info",
}

// expectedFamilies derives what generation g must expose: for V1 every
// current, not opt-in catalogue metric; for V0 the modelled profile.
func expectedFamilies(t *testing.T, cat map[string]catalogueRow, g Generation, release string) []string {
	if g == V0 {
		for _, name := range expectedV0 {
			require.True(t, cat[name].in(V0), "%s is not a V0 metric in the catalogue", name)
		}
		return expectedV0
	}
	var out []string
	for name, row := range cat {
		_, skip := notModelled[name]
		skip = skip || (release != Release032 && slices.Contains(release032, name))
		if row.current() && !optIn(name) && !skip {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

var parenRE = regexp.MustCompile(`\([^()]*\)`)

// catalogueLabels parses the labels column for generation g. Forms:
// "{V0: model_name | V1: model_name (+engine since …)}", "model_name,engine,
// reason (reason in {…})", "V0: a,b | V1: a,b,c", "model_name,engine(since …)".
func catalogueLabels(cell string, g Generation) []string {
	s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cell), "{"), "}")
	if strings.Contains(s, "V0:") {
		prefix := strings.ToUpper(string(g)) + ":"
		for _, part := range strings.Split(s, " | ") {
			if part = strings.TrimSpace(part); strings.HasPrefix(part, prefix) {
				s = strings.TrimPrefix(part, prefix)
			}
		}
	}
	addEngine := strings.Contains(s, "(+engine") && g == V1
	s, _, _ = strings.Cut(parenRE.ReplaceAllString(s, ""), ";")
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	if addEngine {
		out = append(out, "engine")
	}
	slices.Sort(out)
	return out
}

var listRE = regexp.MustCompile(`\[([^\[\]]*)\]`)

// catalogueBuckets picks the bucket list generation g uses: the list after
// "V0 " for V0 where the column names one, else the newest (last) list.
// Lists that are not plain numbers (Python expressions) are skipped.
func catalogueBuckets(cell string, g Generation) []float64 {
	if i := strings.Index(cell, "V0 "); g == V0 && i >= 0 {
		if m := listRE.FindStringSubmatch(cell[i:]); m != nil {
			return parseFloatList(m[1])
		}
	}
	var last []float64
	for _, m := range listRE.FindAllStringSubmatch(cell, -1) {
		if l := parseFloatList(m[1]); l != nil {
			last = l
		}
	}
	return last
}

func parseFloatList(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

func TestExpositionMatchesCatalogue(t *testing.T) {
	cat := loadCatalogue(t)
	tests := []struct {
		name    string
		gen     Generation
		dp      int
		release string
		policy  string
	}{
		{"v1 single engine", V1, 1, "", ""},
		{"v1 data parallel", V1, 3, "", ""},
		{"v1 0.32", V1, 1, Release032, ""},
		{"v1 0.32 data parallel", V1, 2, Release032, ""},
		{"v1 0.32 with KV offloading", V1, 1, Release032, ""},
		{"v1 0.32 priority scheduling, data parallel", V1, 2, Release032, PolicyPriority},
		{"v0", V0, 1, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := InstanceConfig{Model: "org/model-a", Engines: tt.dp, Generation: tt.gen, Release: tt.release}
			if strings.Contains(tt.name, "offloading") {
				// A GPU smaller than the prompts' working set, so the tier
				// also loads: every offload family gets its series.
				ic.Engine = offloadEngine(1, 600, 16)
			}
			f := newTestFleet(t, func(c *Config) {
				c.Engine.SchedulingPolicy = tt.policy
				if tt.policy == PolicyPriority {
					c.Engine.PriorityMix = PriorityMix{{-3, 1}, {-1, 1}, {0, 1}, {1, 1}, {3, 1}}
				}
			}, ic)
			require.NoError(t, f.Advance(2*time.Minute)) // every family gets observations
			got := scrape(t, f, 0)
			want := expectedFamilies(t, cat, tt.gen, tt.release)
			if tt.policy == PolicyPriority {
				want = append(want, "vllm:request_priority")
			}
			for _, name := range want {
				require.Contains(t, got.families, name, "missing %s", name)
			}
			for name, fv := range got.families {
				row, ok := cat[name]
				require.True(t, ok, "%s is not in the catalogue", name)
				require.True(t, row.in(tt.gen), "%s leaks from the other generation", name)
				if tt.gen == V1 {
					require.True(t, row.current(), "%s was removed from V1", name)
					require.True(t, tt.release == Release032 || !slices.Contains(release032, name), "%s is a 0.32 family", name)
				}
				checkFamily(t, row, fv, tt.gen, tt.dp, tt.policy == PolicyPriority)
			}
		})
	}
}

// checkFamily compares one exposed family with its catalogue row.
// Under the priority policy the families whose labels cell names
// "+priority" carry it.
func checkFamily(t *testing.T, row catalogueRow, fv *familyView, g Generation, dp int, priority bool) {
	t.Helper()
	require.Equal(t, strings.ToUpper(row.typ), fv.typ, "%s type", row.family)
	engines := map[string]bool{}
	for _, sv := range fv.series {
		engines[sv.labels["engine"]] = true
		checkSeriesLabels(t, row, sv, g, priority)
		if row.typ == "histogram" {
			require.Equal(t, catalogueBuckets(row.buckets, g), sv.bounds, "%s buckets", row.family)
			require.Equal(t, sv.count, sv.inf, "%s: +Inf bucket equals count", row.family)
		}
	}
	switch {
	case g == V1 && row.family != "vllm:cache_config_info" && !slices.Contains(catalogueLabels(row.labels, g), "engine"):
		// Counted per API server (admission_rejections_total) or shared
		// (lora_requests_info): one series set per instance.
		require.Equal(t, map[string]bool{"": true}, engines, "%s: no engine label", row.family)
	case g == V1:
		require.Len(t, engines, dp, "%s: one series set per engine", row.family)
	}
}

func checkSeriesLabels(t *testing.T, row catalogueRow, sv seriesView, g Generation, priority bool) {
	t.Helper()
	var names []string
	for k := range sv.labels {
		names = append(names, k)
	}
	slices.Sort(names)
	if row.family == "vllm:cache_config_info" {
		// One label per CacheConfig attribute, engine in V1, never model_name;
		// V1 has every label the table names.
		want := []string{"block_size", "num_gpu_blocks", "enable_prefix_caching", "gpu_memory_utilization", "cache_dtype"}
		if g == V1 {
			want = cacheConfigLabels(row.labels)
			require.Contains(t, want, "kv_cache_max_concurrency", "the table lists the V1 labels")
		}
		for _, l := range want {
			require.Contains(t, names, l)
		}
		require.NotContains(t, names, "model_name")
		require.Equal(t, g == V1, slices.Contains(names, "engine"), "cache_config_info engine label")
		return
	}
	want := catalogueLabels(row.labels, g)
	if priority && strings.Contains(row.labels, "(+priority with --scheduling-policy priority") {
		want = append(want, "priority")
		slices.Sort(want)
	}
	require.Equal(t, want, names, "%s labels", row.family)
}

// labelListRE matches the first parenthesised, comma-separated list.
var labelListRE = regexp.MustCompile(`\(([^()]*,[^()]*)\)`)

// cacheConfigLabels reads the label names listed in parentheses in the
// table's cache_config_info labels cell ("…(block_size, cache_dtype, ...)").
func cacheConfigLabels(cell string) []string {
	m := labelListRE.FindStringSubmatch(cell)
	if m == nil {
		return nil
	}
	var out []string
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f != "" && f != "..." {
			out = append(out, f)
		}
	}
	return out
}

// TestNotModelledIsExact: every family listed as not modelled is a
// current, required V1 family of the table.
func TestNotModelledIsExact(t *testing.T) {
	cat := loadCatalogue(t)
	for name, why := range notModelled {
		require.NotEmpty(t, why, name)
		require.True(t, cat[name].current() && !optIn(name), "%s is not a current, required V1 family", name)
	}
}

func TestExpositionValues(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Engine.NumGPUBlocks = 1234 },
		InstanceConfig{Model: "m", Engines: 2}, InstanceConfig{Model: "m", Generation: V0})
	require.NoError(t, f.Advance(time.Minute))
	v1, v0 := scrape(t, f, 0), scrape(t, f, 1)
	tests := []struct {
		name   string
		s      scraped
		family string
		match  map[string]string
		want   float64
	}{
		{"v1 cache config", v1, "vllm:cache_config_info", map[string]string{"engine": "1", "num_gpu_blocks": "1234", "block_size": "16"}, 1},
		{"v0 cache config", v0, "vllm:cache_config_info", map[string]string{"num_gpu_blocks": "1234"}, 1},
		{"v1 pre-creates error", v1, "vllm:request_success_total", map[string]string{"engine": "0", "finished_reason": "error"}, 0},
		{"v1 pre-creates repetition", v1, "vllm:request_success_total", map[string]string{"engine": "1", "finished_reason": "repetition"}, 0},
		{"nothing deferred", v1, "vllm:num_requests_waiting_by_reason", map[string]string{"engine": "0", "reason": "deferred"}, 0},
		{"awake", v1, "vllm:engine_sleep_state", map[string]string{"engine": "0", "sleep_state": "awake"}, 1},
		{"v0 never swaps", v0, "vllm:num_requests_swapped", nil, 0},
		{"v0 no cpu cache", v0, "vllm:cpu_cache_usage_perc", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.s.value(t, tt.family, tt.match))
		})
	}
	t.Run("v0 creates success series lazily", func(t *testing.T) {
		for _, sv := range v0.families["vllm:request_success_total"].series {
			require.Contains(t, []string{"stop", "length", "abort"}, sv.labels["finished_reason"])
			require.Positive(t, sv.value)
		}
	})
	t.Run("v0 has no engine label anywhere", func(t *testing.T) {
		require.NotContains(t, v0.text, `engine="`)
	})
}

func TestMetricsHandler(t *testing.T) {
	f := newTestFleet(t, nil, InstanceConfig{Model: "m"})
	tests := []struct {
		name, path  string
		instance    int
		status      int
		contentType string
	}{
		{"metrics", "/metrics", 0, http.StatusOK, ContentType},
		{"health", "/health", 0, http.StatusOK, ""},
		{"no such instance", "/metrics", 3, http.StatusNotFound, ""},
		{"no such path", "/v1/models", 0, http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			f.Handler(tt.instance).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			require.Equal(t, tt.status, rec.Code)
			if tt.contentType != "" {
				require.Equal(t, tt.contentType, rec.Header().Get("Content-Type"))
				parseExposition(t, rec.Body.String())
			}
		})
	}
}

// notCataloguedYet are the families the simulator exposes (as vLLM does)
// that the plugin's catalogue (pkg/vllm/catalogue.go) has no signal for.
// The test fails when one gets catalogued, so the list stays exact.
var notCataloguedYet = []string{
	// Both generations: request parameters.
	"vllm:request_max_num_generation_tokens", "vllm:request_params_n", "vllm:request_params_max_tokens",
	// V1: caches, per-request TPOT, MFU estimates, sleep mode, NIXL detail.
	"vllm:mm_cache_queries_total", "vllm:mm_cache_hits_total",
	"vllm:prompt_tokens_cached_total",
	"vllm:request_prefill_kv_computed_tokens", "vllm:request_time_per_output_token_seconds",
	"vllm:estimated_flops_per_gpu_total", "vllm:estimated_read_bytes_per_gpu_total",
	"vllm:estimated_write_bytes_per_gpu_total", "vllm:engine_sleep_state",
	"vllm:nixl_post_time_seconds", "vllm:nixl_num_descriptors",
	// V1 0.32: the policy and the raw priorities (the plugin reads the
	// priority label on the families it groups, not these).
	"vllm:scheduler_policy_info", "vllm:request_priority",
	// V1 0.32 with KV offloading: the deprecated transfer_type families,
	// the transfer sizes, the lookup delay and the CPU usage gauges
	// (prefixCache reads bytes, time and failures).
	"vllm:kv_offload_total_bytes_total", "vllm:kv_offload_total_time_total", "vllm:kv_offload_size",
	"vllm:kv_offload_load_size", "vllm:kv_offload_store_size", "vllm:kv_offload_lookup_sync_delay_seconds",
	"vllm:kv_offload_cpu_cache_usage_perc", "vllm:kv_offload_cpu_cache_write_usage_perc",
	"vllm:kv_offload_cpu_cache_read_usage_perc",
	// V1 0.32 after a sleep-mode call: the API server's operation durations
	// (the fleet table reads engine_sleep_state).
	sleepOpDurationName, sleepOpInFlightName,
	// V0 only.
	"vllm:cpu_prefix_cache_hit_rate", "vllm:time_in_queue_requests",
}

// pluginFamilies maps each exposed family name the plugin catalogue reads
// for generation g to its signal.
func pluginFamilies(g Generation) map[string]vllm.Signal {
	out := map[string]vllm.Signal{}
	for _, s := range vllm.Signals() {
		name := s.V1
		if g == V0 {
			name = s.V0
		}
		if name != "" {
			out["vllm:"+name] = s
		}
	}
	return out
}

// pluginNotSimulated are V1 families the plugin reads that the simulator
// does not expose yet, each with why; the test fails once it does. Empty
// since the KV-offload tier (offload.go) exposes what prefixCache reads.
var pluginNotSimulated = map[string]string{}

// TestSimulatorPluginAndReferenceAgree checks the three descriptions of
// vLLM's metrics against each other: every family the plugin catalogue
// reads is exposed by the simulator with the catalogue's type and labels
// and is in the reference table for that generation; every family the
// simulator exposes is in the table (TestExpositionMatchesCatalogue) and
// either catalogued or listed in notCataloguedYet.
func TestSimulatorPluginAndReferenceAgree(t *testing.T) {
	cat := loadCatalogue(t)
	uncatalogued := map[string]bool{}
	for _, gen := range []Generation{V1, V0} {
		t.Run(string(gen), func(t *testing.T) {
			// Every opt-in feature on, so the families it registers are there.
			f := featureFleet(t, gen)
			require.NoError(t, f.Advance(2*time.Minute))
			if gen == V1 {
				// A sleep-mode call creates the 0.32 API server's sleep families.
				require.NoError(t, f.SetSleep(0, 1))
				require.NoError(t, f.SetSleep(0, 0))
			}
			got := scrapeAll(t, f)
			plugin := pluginFamilies(gen)
			for name, s := range plugin {
				fv, ok := got.families[name]
				if !ok && gen == V0 && optIn(name) {
					continue // V0's opt-in families (speculative decoding) are not modelled
				}
				if _, skip := pluginNotSimulated[name]; skip && gen == V1 {
					require.False(t, ok, "the simulator exposes %s: drop it from pluginNotSimulated", name)
					continue
				}
				require.True(t, ok, "the plugin reads %s (%s), the simulator does not expose it", name, s.Key)
				row, ok := cat[name]
				require.True(t, ok && row.in(gen), "the plugin reads %s, the reference table has no %s row", name, gen)
				want := string(s.Kind)
				if s.Kind == vllm.Info {
					want = "gauge"
				}
				require.Equal(t, strings.ToUpper(want), fv.typ, "%s type", name)
				for _, l := range s.Labels {
					require.Contains(t, fv.series[0].labels, l, "%s label the plugin reads", name)
				}
			}
			for name := range got.families {
				if _, ok := plugin[name]; !ok {
					uncatalogued[name] = true
				}
			}
		})
	}
	for name := range uncatalogued {
		if !slices.Contains(notCataloguedYet, name) {
			t.Errorf("%s is exposed but neither catalogued in pkg/vllm nor listed in notCataloguedYet", name)
		}
	}
	for _, name := range notCataloguedYet {
		if !uncatalogued[name] {
			t.Errorf("%s is listed in notCataloguedYet but is catalogued or not exposed; drop it from the list", name)
		}
	}
}
