package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// FleetRow is one engine of the fleet table. Pointers are nil where the
// engine does not report the signal (or it has no value, e.g. a latency
// quantile of an engine that finished nothing in the window).
type FleetRow struct {
	Instance, Engine, Model, Generation, State string
	// Role is the engine's prefill/decode role, "" where its series carry none.
	Role string
	// Missing lists the signals an engine that is up does not export.
	Missing string
	Score   float64

	Running, Waiting, KVUsage, PreemptionsPerMin *float64
	QueueP99, TTFTP99                            *float64
	RequestsPerSec, GenTokensPerSec, FailedShare *float64
	// PrefixHitRate is the prefix-cache hit rate over the rate window;
	// nil when the engine exports no prefix-cache metric or looked up
	// nothing.
	PrefixHitRate *float64
	// ScrapeSeconds is how long the last scrape of the engine's server
	// took; ScrapeTimeoutShare is that over the scrape timeout (a share:
	// 1 is a scrape that timed out). Nil without Prometheus' scrape series.
	ScrapeSeconds, ScrapeTimeoutShare *float64
	// RejectedPerSec is the requests per second the engine's server refused
	// at its queue limits (vLLM 0.32; per server, shown on each of its
	// engines); nil where the server exports no rejection counter.
	RejectedPerSec *float64
	// GPU sums the GPUs of the engine's instance, where agents report them.
	GPU *GPUSummary
	// CPUThrottled and MemoryOfLimit are the server's worst container's
	// CFS-throttled share and memory share of limit (cAdvisor).
	CPUThrottled, MemoryOfLimit *float64
}

// fleetColumn is one numeric column of the fleet table.
type fleetColumn struct {
	name, unit string
	value      func(r *FleetRow) *float64
}

var fleetColumns = []fleetColumn{
	{"running", "reqs", func(r *FleetRow) *float64 { return r.Running }},
	{"waiting", "reqs", func(r *FleetRow) *float64 { return r.Waiting }},
	{"rejected/s", "reqps", func(r *FleetRow) *float64 { return r.RejectedPerSec }},
	{"kv cache usage", "percentunit", func(r *FleetRow) *float64 { return r.KVUsage }},
	{"preemptions/min", "short", func(r *FleetRow) *float64 { return r.PreemptionsPerMin }},
	{"queue time p99", "s", func(r *FleetRow) *float64 { return r.QueueP99 }},
	{"ttft p99", "s", func(r *FleetRow) *float64 { return r.TTFTP99 }},
	{"requests/s", "reqps", func(r *FleetRow) *float64 { return r.RequestsPerSec }},
	{"generation tokens/s", "short", func(r *FleetRow) *float64 { return r.GenTokensPerSec }},
	{"error+abort share", "percentunit", func(r *FleetRow) *float64 { return r.FailedShare }},
	{"prefix cache hit rate", "percentunit", func(r *FleetRow) *float64 { return r.PrefixHitRate }},
	{"scrape s", "s", func(r *FleetRow) *float64 { return r.ScrapeSeconds }},
	{"scrape % of timeout", "percentunit", func(r *FleetRow) *float64 { return r.ScrapeTimeoutShare }},
}

// fleetColumnOf names the column showing each checked fleet signal.
var fleetColumnOf = map[string]string{vllm.FleetWaiting: "waiting", vllm.FleetKVUsage: "kv cache usage",
	vllm.FleetPreemptions: "preemptions/min", vllm.FleetQueueP99: "queue time p99", vllm.FleetTTFTP99: "ttft p99",
	vllm.FleetRequests: "requests/s", vllm.FleetGenTokens: "generation tokens/s"}

// FleetColumnOf is the header of the fleet table's column showing a signal
// (a vllm.Fleet* name), for notices about that column; the signal name
// where no column shows it.
func FleetColumnOf(signal string) string {
	if c, ok := fleetColumnOf[signal]; ok {
		return c
	}
	return signal
}

// FleetTable builds the fleet table, rows in the order given (worst first).
func FleetTable(rows []FleetRow, executed string, notices []data.Notice) *data.Frame {
	n := len(rows)
	text := func(get func(r *FleetRow) string) []string {
		out := make([]string, n)
		for i := range rows {
			out[i] = get(&rows[i])
		}
		return out
	}
	score := make([]float64, n)
	for i, r := range rows {
		score[i] = r.Score
	}
	fields := []*data.Field{
		data.NewField("instance", nil, text(func(r *FleetRow) string { return r.Instance })),
		data.NewField("engine", nil, text(func(r *FleetRow) string { return r.Engine })),
		data.NewField("model", nil, text(func(r *FleetRow) string { return r.Model })),
		data.NewField("role", nil, text(func(r *FleetRow) string { return r.Role })),
		data.NewField("generation", nil, text(func(r *FleetRow) string { return r.Generation })),
		data.NewField("state", nil, text(func(r *FleetRow) string { return r.State })),
		data.NewField("score", nil, score),
	}
	for _, c := range fleetColumns {
		vals := make([]*float64, n)
		for i := range rows {
			vals[i] = c.value(&rows[i])
		}
		f := data.NewField(c.name, nil, vals)
		f.Config = &data.FieldConfig{Unit: c.unit}
		fields = append(fields, f)
	}
	fields = append(fields, data.NewField("missing metrics", nil, text(func(r *FleetRow) string { return r.Missing })))
	gpus := make([]*GPUSummary, n)
	for i := range rows {
		gpus[i] = rows[i].GPU
	}
	fields = append(fields, gpuFields(gpus)...)
	fields = append(fields, fleetContainerFields(rows)...)
	f := data.NewFrame("fleet", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed, Notices: notices})
	return f
}
