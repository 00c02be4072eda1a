//go:build !mutation

package query_test

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// offloadExposition is the recorded vLLM 0.32 server with native CPU KV
// offloading; its counters hold one minute of steady load.
const offloadExposition = "testdata/expositions/vllm-0.32-offload.prom"

// serveGrowing serves an exposition whose counters (samples named
// *_total) grow at a steady rate: value × (seconds since an hour before
// the server started) / 60, so each counter's rate is its file value per
// minute, and an hour of history before the first scrape keeps rate()
// from capping its extrapolation at the counter's zero.
func serveGrowing(t *testing.T, path string) string {
	t.Helper()
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	origin := time.Now().Add(-time.Hour)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", promtest.ContentType)
		_, _ = w.Write(scaleCounters(t, body, time.Since(origin).Seconds()/60))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// scaleCounters multiplies the value of every *_total sample by k.
func scaleCounters(t *testing.T, body []byte, k float64) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		name, _, _ := strings.Cut(line, "{")
		if i := strings.LastIndexByte(line, ' '); !strings.HasPrefix(line, "#") && strings.HasSuffix(name, "_total") && i > 0 {
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				t.Errorf("sample %q: %v", line, err)
			}
			line = line[:i+1] + strconv.FormatFloat(v*k, 'g', -1, 64)
		}
		out.WriteString(line + "\n")
	}
	return out.Bytes()
}

// TestPrefixCacheOffloadTiers runs the prefixCache query through real
// Prometheus scraping the recorded vLLM 0.32 server with KV offloading
// beside a current simulator engine, which has no offload tier. The
// offload server's series are its counters' rates (cached tokens by tier,
// bytes each way, time shares, failures); tiers it never used and every
// offload series of the simulator engine are absent, not zero; a fleet
// without offloading gets a notice naming the families and vLLM's flag.
func TestPrefixCacheOffloadTiers(t *testing.T) {
	t.Parallel()
	cfg := fleettest.HotFleet(47)
	cfg.Instances = []sim.InstanceConfig{{Model: "current"}}
	env := fleettest.Run(t, cfg)
	simEngine, offload := env.Endpoints[0].Addr, serveGrowing(t, offloadExposition)
	srv := promtest.Start(t, promtest.Options{Targets: []string{simEngine, offload}})
	plain := promtest.Start(t, promtest.Options{Targets: []string{simEngine}})
	// Older than the rate window (4 × the 10s scrape interval of the
	// settings), so no young-series correction enters the rates.
	srv.WaitForSeries(t, `count_over_time(vllm:kv_offload_store_bytes_total[1m]) >= 55`, 1, 120*time.Second)
	srv.WaitForSeries(t, `count_over_time(vllm:prefix_cache_queries_total[1m]) >= 55`, 1, 120*time.Second)
	to := time.Now()

	t.Run("the offload server's rates per instance", func(t *testing.T) {
		r := run(t, executor(t, srv.URL), dq("P", `{"queryType":"prefixCache","grouping":"instance","interval":"10s"}`, to.Add(-30*time.Second), to)).Responses["P"]
		require.NoError(t, r.Error)
		frames := byName(r.Frames)
		const mib = 1 << 20
		want := map[string]struct {
			v    float64
			unit string
		}{
			"cached_tokens_device": {500, ""}, "cached_tokens_host": {100, ""},
			"offload_load_bytes": {20 * mib, "Bps"}, "offload_store_bytes": {50 * mib, "Bps"},
			"offload_load_time_share": {0.02, "percentunit"}, "offload_store_time_share": {0.05, "percentunit"},
			"offload_allocation_failures": {0.5, "ops"},
		}
		for sig, w := range want {
			f := frames[offload+" "+sig]
			require.NotNil(t, f, "%s: frames %v", sig, keys(frames))
			_, got := lastPoint(f)
			t.Logf("%s: %.4g (counter rate %.4g) %d points", sig, got, w.v, f.Rows())
			require.InEpsilon(t, w.v, got, 0.01, sig)
			if w.unit != "" {
				require.Equal(t, w.unit, f.Fields[1].Config.Unit, sig)
			}
		}
		for _, src := range []string{"p2p", "disk", "external_unspecified"} {
			require.Nil(t, frames[offload+" cached_tokens_"+src], "a tier the server never used is absent, not 0")
		}
		_, hit := lastPoint(frames[offload+" prompt_tokens_local_cache_hit"])
		_, ext := lastPoint(frames[offload+" prompt_tokens_external_kv_transfer"])
		_, dev := lastPoint(frames[offload+" cached_tokens_device"])
		_, host := lastPoint(frames[offload+" cached_tokens_host"])
		require.InEpsilon(t, hit+ext, dev+host, 0.01, "the tiers add up to the prompt tokens served from a cache")

		require.NotNil(t, frames[simEngine+" hit_rate"], "the simulator engine still answers: %v", keys(frames))
		for name := range frames {
			if strings.HasPrefix(name, simEngine+" ") {
				require.NotContains(t, name, "offload_", "no offload tier on the simulator engine")
				require.NotContains(t, name, "cached_tokens_", "no cached-by-source counter on the simulator engine")
			}
		}
	})
	t.Run("the simulator engine alone: absent, with why", func(t *testing.T) {
		js := `{"queryType":"prefixCache","grouping":"none","interval":"10s","instances":["` + simEngine + `"]}`
		r := run(t, executor(t, srv.URL), dq("P", js, to.Add(-30*time.Second), to)).Responses["P"]
		require.NoError(t, r.Error)
		frames := byName(r.Frames)
		require.NotNil(t, frames["hit_rate"], "%v", keys(frames))
		for name := range frames {
			require.False(t, strings.HasPrefix(name, "offload_") || strings.HasPrefix(name, "cached_tokens_"), name)
		}
		require.Contains(t, noticeTexts(r.Frames), "KV offloading is not configured on them")
	})
	t.Run("a fleet without offloading is told which flag", func(t *testing.T) {
		plain.WaitForSeries(t, `count_over_time(vllm:prefix_cache_queries_total[1m]) >= 30`, 1, 120*time.Second)
		r := run(t, executor(t, plain.URL), dq("P", `{"queryType":"prefixCache","grouping":"none","interval":"10s"}`, to.Add(-30*time.Second), time.Now())).Responses["P"]
		require.NoError(t, r.Error)
		for name := range byName(r.Frames) {
			require.False(t, strings.HasPrefix(name, "offload_") || strings.HasPrefix(name, "cached_tokens_"), name)
		}
		all := noticeTexts(r.Frames)
		require.Contains(t, all, "This fleet exports no vllm:prompt_tokens_cached_by_source_total, so cached prompt tokens per second by tier")
		require.Contains(t, all, "This fleet exports no vllm:kv_offload_store_bytes_total or vllm:kv_offload_load_bytes_total or vllm:kv_offload_allocation_failure_total")
		require.Contains(t, all, "--kv-offloading-size <GiB> --kv-offloading-backend native")
	})
}
