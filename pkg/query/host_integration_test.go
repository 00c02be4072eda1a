//go:build !mutation

package query_test

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// TestHostWithNodeExporter runs the real node exporter beside the
// simulated fleet (all on 127.0.0.1, so every instance shares its host):
// the host query joins its CPU, memory, network and disk series to each
// vLLM instance, memory agrees with /proc/meminfo, and a Prometheus that
// scrapes no node exporter answers with a notice and no error.
func TestHostWithNodeExporter(t *testing.T) {
	t.Parallel()
	node := promtest.StartNodeExporter(t)
	env := fleettest.StartWith(t, fleettest.HotFleet(19), promtest.Options{NodeTargets: []string{node}})
	env.Prom.WaitForSeries(t, `count_over_time(node_cpu_seconds_total{mode="idle"}[1m]) >= 6`, 1, 60*time.Second)
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 6`, 8, 60*time.Second)
	e := executor(t, env.Prom.URL)
	to := time.Now()
	hot := env.Endpoints[0].Addr

	r := run(t, e, dq("H", `{"queryType":"host"}`, to.Add(-30*time.Second), to)).Responses["H"]
	require.NoError(t, r.Error)
	frames := byName(r.Frames)
	for _, ep := range env.Endpoints {
		for _, sig := range []string{"cpu_busy", "memory_used", "network_receive", "network_transmit", "disk_busy"} {
			f := frames[ep.Addr+" "+sig]
			require.NotNil(t, f, "frames: %v", keys(frames))
			require.Equal(t, "127.0.0.1", f.Fields[1].Labels["host"])
			_, v := lastPoint(f)
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s %s", ep.Addr, sig)
			require.GreaterOrEqual(t, v, 0.0, "%s %s", ep.Addr, sig)
			if sig != "network_receive" && sig != "network_transmit" {
				require.LessOrEqual(t, v, 1.0, "%s %s is a share", ep.Addr, sig)
			}
		}
	}
	_, mem := lastPoint(frames[hot+" memory_used"])
	require.InDelta(t, memUsedNow(t), mem, 0.1, "memory used vs /proc/meminfo")
	require.Equal(t, "percentunit", frames[hot+" cpu_busy"].Fields[1].Config.Unit)
	require.Equal(t, "Bps", frames[hot+" network_receive"].Fields[1].Config.Unit)

	t.Run("one instance", func(t *testing.T) {
		r := run(t, e, dq("H", `{"queryType":"host","instances":["`+hot+`"]}`, to.Add(-30*time.Second), to)).Responses["H"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 5)
	})
	t.Run("no node exporter: a notice, no error", func(t *testing.T) {
		bare := env.Also(t, promtest.Prometheus2)
		bare.WaitForSeries(t, `vllm:num_requests_running`, 8, 60*time.Second)
		r := run(t, executor(t, bare.URL), dq("H", `{"queryType":"host"}`, time.Now().Add(-10*time.Second), time.Now())).Responses["H"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 1)
		require.Empty(t, r.Frames[0].Fields)
		require.Contains(t, noticeText(r.Frames[0].Meta.Notices), "No node exporter is scraped")
	})
	t.Run("grouping other than instance is refused", func(t *testing.T) {
		r := run(t, e, dq("H", `{"queryType":"host","grouping":"model"}`, to.Add(-30*time.Second), to)).Responses["H"]
		require.ErrorContains(t, r.Error, `grouping "model" is not allowed for host`)
	})
}

// memUsedNow is 1 − MemAvailable ÷ MemTotal from /proc/meminfo.
func memUsedNow(t *testing.T) float64 {
	f, err := os.Open("/proc/meminfo")
	require.NoError(t, err)
	defer f.Close()
	vals := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 {
			v, _ := strconv.ParseFloat(fields[1], 64)
			vals[strings.TrimSuffix(fields[0], ":")] = v
		}
	}
	require.Positive(t, vals["MemTotal"])
	return 1 - vals["MemAvailable"]/vals["MemTotal"]
}
