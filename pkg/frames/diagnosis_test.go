package frames

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
)

func fp(v float64) *float64 { return &v }

func TestFleetTable(t *testing.T) {
	gpu := &GPUSummary{GPUs: 2, MemoryUsedBytes: 10, MemoryTotalBytes: 20, UtilPercent: 55}
	rows := []FleetRow{
		{Instance: "a:1", Engine: "0", Model: "m", Generation: "V1", State: "down", Score: 1000},
		{Instance: "b:1", Engine: "1", Model: "m", Generation: "V0", State: "up", Score: 12.5,
			Running: fp(4), Waiting: fp(8), KVUsage: fp(0.5), PreemptionsPerMin: fp(3), QueueP99: fp(1.5), TTFTP99: fp(0.2),
			RequestsPerSec: fp(6), GenTokensPerSec: fp(600), FailedShare: fp(0.01), PrefixHitRate: fp(0.42), RejectedPerSec: fp(2.5),
			ScrapeSeconds: fp(2.5), ScrapeTimeoutShare: fp(0.25), GPU: gpu},
		{Instance: "c:1", State: "missing metrics", Missing: "kv_usage"},
	}
	tests := []struct {
		name   string
		rows   []FleetRow
		fields []string
		gpu    bool
	}{
		{"with GPUs", rows, nil, true},
		{"without GPUs", rows[:1], nil, false},
		{"empty", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FleetTable(tt.rows, "Expr: x", []data.Notice{{Text: "n"}})
			require.Equal(t, "fleet", f.Name)
			require.Equal(t, data.FrameTypeTable, f.Meta.Type)
			require.Equal(t, "Expr: x", f.Meta.ExecutedQueryString)
			require.Len(t, f.Meta.Notices, 1)
			want := []string{"instance", "engine", "model", "role", "generation", "state", "score", "running", "waiting", "rejected/s", "kv cache usage",
				"preemptions/min", "queue time p99", "ttft p99", "requests/s", "generation tokens/s", "error+abort share", "prefix cache hit rate",
				"scrape s", "scrape % of timeout", "missing metrics"}
			if tt.gpu {
				want = append(want, "gpus", "gpu memory used", "gpu memory total", "gpu utilization")
			}
			names := make([]string, len(f.Fields))
			for i, fd := range f.Fields {
				names[i] = fd.Name
				require.Equal(t, len(tt.rows), fd.Len(), fd.Name)
			}
			require.Equal(t, want, names)
		})
	}
	f := FleetTable(rows, "", nil)
	cell := func(name string, i int) any {
		fd, _ := f.FieldByName(name)
		v, ok := fd.ConcreteAt(i)
		if !ok {
			return nil
		}
		return v
	}
	require.Equal(t, "b:1", cell("instance", 1))
	require.Equal(t, "1", cell("engine", 1))
	require.Equal(t, "V0", cell("generation", 1))
	require.Equal(t, "up", cell("state", 1))
	require.Equal(t, 12.5, cell("score", 1))
	for name, want := range map[string]float64{"running": 4, "waiting": 8, "kv cache usage": 0.5, "preemptions/min": 3, "queue time p99": 1.5,
		"ttft p99": 0.2, "requests/s": 6, "generation tokens/s": 600, "error+abort share": 0.01, "prefix cache hit rate": 0.42,
		"scrape s": 2.5, "scrape % of timeout": 0.25, "rejected/s": 2.5} {
		require.Equal(t, want, cell(name, 1), name)
		require.Nil(t, cell(name, 0), "a down engine has no %s", name)
	}
	require.Equal(t, "kv_usage", cell("missing metrics", 2))
	require.Equal(t, int64(2), cell("gpus", 1))
	require.Nil(t, cell("gpus", 0))
	units := map[string]string{}
	for _, fd := range f.Fields {
		if fd.Config != nil {
			units[fd.Name] = fd.Config.Unit
		}
	}
	require.Equal(t, map[string]string{"running": "reqs", "waiting": "reqs", "rejected/s": "reqps", "kv cache usage": "percentunit", "preemptions/min": "short",
		"queue time p99": "s", "ttft p99": "s", "requests/s": "reqps", "generation tokens/s": "short", "error+abort share": "percentunit",
		"prefix cache hit rate": "percentunit", "scrape s": "s", "scrape % of timeout": "percentunit", "gpu memory used": "bytes", "gpu memory total": "bytes", "gpu utilization": "percent"}, units)
}

func TestSaturationTable(t *testing.T) {
	rows := []SaturationRow{{Instance: "a:1", Engine: "0", Verdict: "ok", Reason: "r", Ceiling: 8, MeanRunning: 4, MeanWaiting: 0.5,
		PeakKV: 0.3, MeanPreemptions: 0.1, MeanArrivals: 3, MeanCompletions: 2.5}}
	tests := []struct {
		name       string
		withEngine bool
		first      []string
	}{
		{"per instance", false, []string{"instance", "verdict", "reason"}},
		{"per engine", true, []string{"instance", "engine", "verdict", "reason"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := SaturationTable(rows, SaturationOptions{WithEngine: tt.withEngine, Executed: "Expr: e", Notices: []data.Notice{{Text: "n"}}})
			require.Equal(t, "saturation", f.Name)
			require.Equal(t, data.FrameTypeTable, f.Meta.Type)
			require.Equal(t, "Expr: e", f.Meta.ExecutedQueryString)
			require.Len(t, f.Meta.Notices, 1)
			got := map[string]any{}
			units := map[string]string{}
			var names []string
			for _, fd := range f.Fields {
				names = append(names, fd.Name)
				got[fd.Name] = fd.At(0)
				if fd.Config != nil {
					units[fd.Name] = fd.Config.Unit
				}
			}
			require.Equal(t, tt.first, names[:len(tt.first)])
			require.Len(t, names, len(tt.first)+7)
			require.Equal(t, map[string]any{"instance": "a:1", "engine": "0", "verdict": "ok", "reason": "r", "mean running": 4.0, "batch ceiling": 8.0,
				"mean waiting": 0.5, "kv cache peak": 0.3, "preemptions/s": 0.1, "arrivals/s": 3.0, "completions/s": 2.5}, withEngine(got, tt.withEngine))
			require.Equal(t, map[string]string{"mean running": "reqs", "batch ceiling": "reqs", "mean waiting": "reqs", "kv cache peak": "percentunit",
				"preemptions/s": "ops", "arrivals/s": "reqps", "completions/s": "reqps"}, units)
		})
	}
}

func withEngine(m map[string]any, has bool) map[string]any {
	if !has {
		m["engine"] = "0"
	}
	return m
}

func TestVerdictTimeline(t *testing.T) {
	times := []time.Time{time.Unix(10, 0), time.Unix(20, 0)}
	f := VerdictTimeline(data.Labels{"instance": "a:1"}, "a:1 verdict", times, []string{"ok", "idle"})
	require.Equal(t, "a:1 verdict", f.Name)
	require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
	require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
	require.Equal(t, times[1], f.Fields[0].At(1))
	require.Equal(t, "idle", f.Fields[1].At(1))
	require.Equal(t, "verdict", f.Fields[1].Name)
	require.Equal(t, data.Labels{"instance": "a:1"}, f.Fields[1].Labels)
	require.Equal(t, "a:1 verdict", f.Fields[1].Config.DisplayNameFromDS)
}

func TestFleetTableRole(t *testing.T) {
	f := FleetTable([]FleetRow{{Instance: "a:1", Role: "prefill"}, {Instance: "b:1"}}, "", nil)
	field, _ := f.FieldByName("role")
	require.NotNil(t, field)
	require.Equal(t, "prefill", field.At(0))
	require.Equal(t, "", field.At(1), "empty where the series carry no role")
}

// TestSaturationTableByRole: grouped by role, each row is named by its
// pool; otherwise by its instance, whatever role it has.
func TestSaturationTableByRole(t *testing.T) {
	rows := []SaturationRow{{Instance: "a:1", Role: "decode", Verdict: "ok"}, {Instance: "b:1", Role: "prefill", Verdict: "idle"}}
	f := SaturationTable(rows, SaturationOptions{ByRole: true})
	require.Equal(t, "role", f.Fields[0].Name)
	require.Equal(t, "decode", f.Fields[0].At(0))
	require.Equal(t, "prefill", f.Fields[0].At(1))
	require.Equal(t, "verdict", f.Fields[1].Name)
	t.Run("a table by instance names instances", func(t *testing.T) {
		f := SaturationTable(rows, SaturationOptions{})
		require.Equal(t, "instance", f.Fields[0].Name)
		require.Equal(t, "a:1", f.Fields[0].At(0))
	})
}
