package plugin_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/live"
)

// TestHostLive drives the data source's Grafana Live channels over the
// plugin's stream service, as Grafana does, against real Prometheus
// scraping a simulated fleet: refused paths, a live queue that follows the
// simulator, two subscribers on one loop, no goroutine left after the
// streams end, and a Prometheus outage in the middle of a stream.
func TestHostLive(t *testing.T) {
	t.Parallel()
	env, addr := grafanahost.Profiling(t)
	host := grafanahost.LaunchWith(t, grafanahost.Build(t), grafanahost.LaunchOptions{Env: env})
	require.True(t, host.Plugin.Streaming, `plugin.json needs "streaming": true for Grafana to route ds/<uid>/… channels to the plugin`)
	fleet := fleettest.Start(t, fleettest.HotFleet(11))
	fleet.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_waiting[1m]) >= 5`, 8, 60*time.Second)
	ds := backend.DataSourceInstanceSettings{UID: "live", URL: fleet.Prom.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)}
	hot := fleet.Endpoints[0].Addr
	queuePath := livePath("queue", `{"grouping":"instance"}`)

	t.Run("bad paths are refused at subscribe, naming the field", func(t *testing.T) {
		tests := []struct{ path, reason string }{
			{"queue/%%%", "options are not base64url"},
			{livePath("slo", `{}`), `kind "slo" is unknown; allowed: queue, fleet`},
			{livePath("queue", `{"grouping":"gpu"}`), `grouping "gpu" is not allowed for queue`},
			{livePath("fleet", `{"worst":"many"}`), "worst"},
			{livePath("queue", `{"every":"250ms"}`), "every 250ms is below 1s"},
		}
		for _, tt := range tests {
			resp := host.SubscribeStream(t, ds, tt.path, nil)
			require.Equal(t, pluginv2.SubscribeStreamResponse_NOT_FOUND, resp.Status, tt.path)
			var body struct{ Error string }
			require.NoError(t, json.Unmarshal(resp.Data, &body), string(resp.Data))
			require.Contains(t, body.Error, tt.reason, tt.path)
		}
		bad := backend.DataSourceInstanceSettings{UID: "live-bad", URL: fleet.Prom.URL, JSONData: []byte(`{"instanceLabel":"a-b"}`)}
		resp := host.SubscribeStream(t, bad, queuePath, nil)
		require.Equal(t, pluginv2.SubscribeStreamResponse_NOT_FOUND, resp.Status, "no channel of a data source whose settings are invalid")
		require.Contains(t, string(resp.Data), "instanceLabel")
		require.Equal(t, pluginv2.SubscribeStreamResponse_OK, host.SubscribeStream(t, ds, queuePath, nil).Status)
		require.Equal(t, pluginv2.PublishStreamResponse_PERMISSION_DENIED, host.PublishStream(t, ds, queuePath, []byte(`{}`)).Status)
	})

	t.Run("options too long for a channel travel in its data", func(t *testing.T) {
		// What src/live.ts sends when ds/<uid>/<path> would pass Grafana's
		// 160 characters: the options' hash in the path, the options in
		// the data.
		js := `{"grouping":"instance","legend":"{{instance}} {{signal}}","instances":["` + strings.Join(fleet.Targets(), `","`) + `"]}`
		enc := live.EncodeOptions([]byte(js))
		require.Greater(t, len("ds/live/queue/"+enc), 160)
		path, data := "queue/"+live.Hashed+"/"+live.HashOptions(enc), []byte(`{"options":"`+enc+`"}`)
		require.Equal(t, pluginv2.SubscribeStreamResponse_OK, host.SubscribeStream(t, ds, path, data).Status)
		other := []byte(`{"options":"` + live.EncodeOptions([]byte(`{"grouping":"model"}`)) + `"}`)
		refused := host.SubscribeStream(t, ds, path, other)
		require.Equal(t, pluginv2.SubscribeStreamResponse_NOT_FOUND, refused.Status)
		require.Contains(t, string(refused.Data), "do not match the path's SHA-256")
		s := host.RunStream(t, ds, path, data)
		f := nextFrame(t, s, 30*time.Second)
		require.Empty(t, f.Meta.Notices)
		require.GreaterOrEqual(t, liveValue(t, f, hot, "waiting"), 0.0)
		s.Stop()
	})

	base := stats(t, addr)

	// Prometheus' queries per queue tick with one subscriber, for the
	// two-subscriber case to compare with.
	var onePerTick float64
	t.Run("the live queue follows the simulator", func(t *testing.T) {
		s := host.RunStream(t, ds, queuePath, nil)
		nextFrame(t, s, 30*time.Second)
		prom0, ticks0 := promQueries(t, fleet.Prom.URL), metric(host.CollectMetrics(t), "vllm_datasource_live_ticks_total", `kind="queue"`)
		var last time.Time
		seen := map[float64]bool{}
		for i := 0; i < 6; i++ {
			f := nextFrame(t, s, 30*time.Second)
			require.Empty(t, f.Meta.Notices, "frame %d", i)
			at := f.Fields[0].At(0).(time.Time)
			require.True(t, at.After(last), "frame %d at %s follows %s", i, at, last)
			last = at
			v := liveValue(t, f, hot, "waiting")
			// The sample at the frame's time is the last scrape before it:
			// one interval back, more when the machine is loaded.
			lo, hi, ok := fleet.WaitingRange(0, at.Add(-5*time.Second), at.Add(500*time.Millisecond))
			require.True(t, ok)
			require.True(t, v >= float64(lo) && v <= float64(hi), "frame %d: %s waiting %v, the simulator had %d..%d", i, hot, v, lo, hi)
			seen[v] = true
		}
		require.Greater(t, len(seen), 1, "the hot instance's queue moved during six ticks, and the stream with it")
		ticks := metric(host.CollectMetrics(t), "vllm_datasource_live_ticks_total", `kind="queue"`) - ticks0
		onePerTick = (promQueries(t, fleet.Prom.URL) - prom0) / ticks
		t.Logf("one subscriber: %v ticks, %.2f queries at Prometheus per tick", ticks, onePerTick)
		s.Stop()
		require.NoError(t, s.Err())
	})

	t.Run("two subscribers of one channel cost one query per tick", func(t *testing.T) {
		a, b := host.RunStream(t, ds, queuePath, nil), host.RunStream(t, ds, queuePath, nil)
		for _, s := range []*grafanahost.Stream{a, b} {
			nextFrame(t, s, 30*time.Second)
		}
		m := host.CollectMetrics(t)
		require.Equal(t, 1.0, metric(m, "vllm_datasource_live_channels", ""), "one loop for the channel")
		ticks0, prom0, start := metric(m, "vllm_datasource_live_ticks_total", `kind="queue"`), promQueries(t, fleet.Prom.URL), time.Now()
		time.Sleep(6 * time.Second)
		m = host.CollectMetrics(t)
		ticks, promAsked, secs := metric(m, "vllm_datasource_live_ticks_total", `kind="queue"`)-ticks0, promQueries(t, fleet.Prom.URL)-prom0, time.Since(start).Seconds()
		t.Logf("two subscribers, over %.1f s: %v ticks, %v queries at Prometheus (%.2f per tick; one subscriber: %.2f)", secs, ticks, promAsked, promAsked/ticks, onePerTick)
		require.LessOrEqual(t, ticks, secs+1.5, "one tick per second for both subscribers, not one each")
		require.GreaterOrEqual(t, ticks, 2.0, "the channel kept ticking")
		require.LessOrEqual(t, promAsked/ticks, onePerTick+1, "Prometheus is asked as often as for one subscriber")

		other := host.RunStream(t, ds, livePath("fleet", `{"worst":2}`), nil)
		fleetFrame := nextFrame(t, other, 30*time.Second)
		require.Equal(t, 2.0, metric(host.CollectMetrics(t), "vllm_datasource_live_channels", ""), "another channel, another loop")
		require.Equal(t, "fleet", fleetFrame.Name)
		require.LessOrEqual(t, fleetFrame.Rows(), 2, "worst keeps two rows")
		a.Stop()
		nextFrame(t, b, 30*time.Second) // b goes on alone
		b.Stop()
		other.Stop()
		require.Eventually(t, func() bool {
			return metric(host.CollectMetrics(t), "vllm_datasource_live_channels", "") == 0
		}, 15*time.Second, 200*time.Millisecond, "the last subscriber to leave ends the channel's loop")
	})

	t.Run("no goroutine left after many streams end", func(t *testing.T) {
		var streams []*grafanahost.Stream
		// Ten channels of two streams: a loop or a stream left behind
		// each would be well over settle's slack.
		for i := 0; i < 10; i++ {
			p := livePath("queue", fmt.Sprintf(`{"grouping":"instance","legend":"s%d"}`, i))
			streams = append(streams, host.RunStream(t, ds, p, nil), host.RunStream(t, ds, p, nil))
		}
		for _, s := range streams {
			nextFrame(t, s, 30*time.Second)
		}
		for _, s := range streams {
			s.Stop()
		}
		settle(t, addr, base)
	})

	t.Run("a Prometheus outage is an error frame, and the stream recovers", func(t *testing.T) {
		s := host.RunStream(t, ds, queuePath, nil)
		require.Empty(t, nextFrame(t, s, 30*time.Second).Meta.Notices)
		fleet.Prom.Kill(t)
		var outage *data.Frame
		for outage == nil {
			f := nextFrame(t, s, 60*time.Second)
			if len(f.Meta.Notices) > 0 {
				outage = f
			}
		}
		require.Equal(t, data.NoticeSeverityError, outage.Meta.Notices[0].Severity)
		t.Logf("outage frame: %s", outage.Meta.Notices[0].Text)
		fleet.Prom.Restart(t)
		for {
			f := nextFrame(t, s, 90*time.Second)
			if len(f.Meta.Notices) == 0 {
				require.GreaterOrEqual(t, liveValue(t, f, hot, "waiting"), 0.0, "the queue is back")
				break
			}
		}
		s.Stop()
		require.NoError(t, s.Err())
	})
}

// livePath is a channel path as the frontend writes it (src/live.ts).
func livePath(kind, js string) string {
	return kind + "/" + live.EncodeOptions([]byte(js))
}

func nextFrame(t *testing.T, s *grafanahost.Stream, within time.Duration) *data.Frame {
	t.Helper()
	select {
	case f, ok := <-s.Frames:
		require.True(t, ok, "the stream ended: %v", s.Err())
		if f.Meta == nil {
			f.Meta = &data.FrameMeta{}
		}
		return f
	case <-time.After(within):
		t.Fatalf("no frame within %s", within)
		return nil
	}
}

// liveValue is the live queue frame's value for one instance and signal.
func liveValue(t *testing.T, f *data.Frame, instance, signal string) float64 {
	t.Helper()
	for _, fd := range f.Fields[1:] {
		if fd.Labels["instance"] == instance && fd.Labels["signal"] == signal {
			v, ok := fd.ConcreteAt(0)
			require.True(t, ok, "%s %s is null", instance, signal)
			return v.(float64)
		}
	}
	t.Fatalf("no %s %s column in %d fields", instance, signal, len(f.Fields))
	return 0
}

// metric sums the samples of name whose labels contain match.
func metric(text, name, match string) float64 {
	sum := 0.0
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") || !strings.Contains(line, match) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// promQueries is how many instant and range queries Prometheus has
// answered, from its own metrics.
func promQueries(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	text := b.String()
	return metric(text, "prometheus_http_requests_total", `handler="/api/v1/query"`) +
		metric(text, "prometheus_http_requests_total", `handler="/api/v1/query_range"`)
}
