package fleetbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// dashboard is six ordinary panels of a fleet overview, as Grafana sends
// them in one request.
var dashboard = []string{
	`{"queryType":"queue","grouping":"model"}`,
	`{"queryType":"waitTime","grouping":"model"}`,
	`{"queryType":"topk","k":5,"rankBy":"waiting"}`,
	`{"queryType":"topk","k":5,"rankBy":"kv_usage","grouping":"instance_engine","asSeries":true}`,
	`{"queryType":"preemptions","asSeries":true,"grouping":"model"}`,
	`{"queryType":"promql","expr":"sum by (model_name) (vllm:num_requests_running)","legend":"{{model_name}}"}`,
}

// loadResult is what the load phase saw.
type loadResult struct {
	name          string
	calls, errors int
	firstErr      string
	p50, p99      time.Duration
	// p99Warm leaves out each caller's first call, which waits for the
	// dashboard's first whole-range answers.
	p99Warm time.Duration
	// p99First is the p99 of each caller's first call: every viewer
	// opening the dashboard at once, before anything is cached.
	p99First    time.Duration
	executions  float64 // Prometheus query executions during the load
	evalSeconds float64 // seconds Prometheus spent evaluating them
	distinct    int     // distinct PromQL expressions in one dashboard
	steps       float64 // query steps the load lasted
	rssPeakMB   float64
	// After the load: the plugin's heap after one collection and after
	// two (see afterLoad), its resident memory, and the data source
	// instances it holds by then.
	heapOneGCMB, heapAfterMB, rssAfterMB, rssQuietMB float64
	instances                                        int
}

// load runs callers concurrent users, each refreshing the dashboard over
// the last span (ending now) as soon as the last refresh answered, for
// loadFor; then reads Prometheus' own count of executed queries.
func (e *env) load(t *testing.T, name string, ds backend.DataSourceInstanceSettings) loadResult {
	before := e.readCounter(t, `prometheus_engine_query_duration_seconds_count{slice="inner_eval"}`)
	evalBefore := e.readCounter(t, `prometheus_engine_query_duration_seconds_sum{slice="inner_eval"}`)
	var mu sync.Mutex
	var lat, warm, firsts []time.Duration
	res := loadResult{name: name}
	deadline := time.Now().Add(*loadFor)
	var wg sync.WaitGroup
	for range *callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; time.Now().Before(deadline); first = false {
				start := time.Now()
				err := e.dashboardOnce(ds, start)
				d := time.Since(start)
				mu.Lock()
				res.calls++
				lat = append(lat, d)
				if first {
					firsts = append(firsts, d)
				} else {
					warm = append(warm, d)
				}
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	after := e.readCounter(t, `prometheus_engine_query_duration_seconds_count{slice="inner_eval"}`)
	res.executions = after - before
	res.evalSeconds = e.readCounter(t, `prometheus_engine_query_duration_seconds_sum{slice="inner_eval"}`) - evalBefore
	res.steps = loadFor.Seconds() / e.step.Seconds()
	res.distinct = e.distinctExprs(t, ds)
	res.p50, res.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	res.p99Warm, res.p99First = quantile(warm, 0.99), quantile(firsts, 0.99)
	res.rssPeakMB = procMB(e.host.Pid(), "VmHWM:")
	e.afterLoad(t, &res)
	return res
}

func (e *env) dashboardQueries(end time.Time) []backend.DataQuery {
	qs := make([]backend.DataQuery, len(dashboard))
	for i, js := range dashboard {
		qs[i] = backend.DataQuery{RefID: fmt.Sprintf("P%d", i), JSON: json.RawMessage(js), Interval: e.step,
			MaxDataPoints: int64(*span / e.step), TimeRange: backend.TimeRange{From: end.Add(-*span), To: end}}
	}
	return qs
}

// dashboardOnce sends the dashboard's request; any failed panel fails it.
func (e *env) dashboardOnce(ds backend.DataSourceInstanceSettings, end time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := e.host.QueryDataErr(ctx, ds, nil, e.dashboardQueries(end)...)
	if err != nil {
		return err
	}
	for ref, r := range resp.Responses {
		if r.Error != nil {
			return fmt.Errorf("%s: %w", ref, r.Error)
		}
	}
	return nil
}

// distinctExprs counts the PromQL expressions one dashboard refresh runs.
func (e *env) distinctExprs(t *testing.T, ds backend.DataSourceInstanceSettings) int {
	resp, err := e.host.QueryDataErr(context.Background(), ds, nil, e.dashboardQueries(time.Now())...)
	if err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	seen := map[string]bool{}
	for _, r := range resp.Responses {
		for _, f := range r.Frames {
			if f.Meta == nil || f.Meta.ExecutedQueryString == "" {
				continue
			}
			s := strings.TrimPrefix(f.Meta.ExecutedQueryString, "Expr: ")
			s = s[:strings.LastIndex(s, "\nStep: ")]
			for _, x := range strings.Split(s, "\n") {
				seen[x] = true
			}
		}
	}
	return len(seen)
}

// quantile is the q-quantile of ds (sorted in place); 0 when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(float64(len(ds))*q))]
}

// procMB is one kB figure of the process' /proc status in MB: VmHWM,
// the peak resident memory, or VmRSS, the resident memory now.
func procMB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, field)), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// render prints the table of medians and ratios.
func render(rows []row, loads []loadResult, engines int, span time.Duration, heapStart uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d engines, range %s at step %s, medians of %d interleaved runs\n\n", engines, span, step, *reps)
	fmt.Fprintf(&b, "| case | points | plugin (gRPC) | raw HTTP, plugin's plan | ratio | raw HTTP, other plan | plugin ÷ fastest raw |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if r.err != "" && r.plugin == 0 {
			fmt.Fprintf(&b, "| %s | — | failed: %.120s | | | | |\n", r.name, r.err)
			continue
		}
		fast, fastRatio := "—", "—"
		best := r.raw
		if r.fast > 0 {
			fast = ms(r.fast)
			best = min(r.raw, r.fast)
		}
		if best > 0 {
			fastRatio = fmt.Sprintf("%.2f×", float64(r.plugin)/float64(best))
		}
		name := r.name
		if r.err != "" {
			name += fmt.Sprintf(" (a run failed: %.80s)", r.err)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %.2f× | %s | %s |\n", name, r.points, ms(r.plugin), ms(r.raw), float64(r.plugin)/float64(max(r.raw, 1)), fast, fastRatio)
	}
	if len(loads) == 0 {
		return b.String()
	}
	ld0 := loads[0]
	fmt.Fprintf(&b, "\nload: %d callers × %s, one dashboard of %d panels (%d distinct PromQL expressions) per call, ranges ending now\n\n", *callers, *loadFor, len(dashboard), ld0.distinct)
	b.WriteString("| data source | calls | errors | p50 | p99 | first refresh p99 (each caller's first call) | p99 after each caller's first call | Prometheus executions | per distinct query per step | Prometheus eval time | " + memoryHeader + " |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:" + strings.Repeat("|---:", memoryColumns) + "|\n")
	for _, ld := range loads {
		perStep := 0.0
		if ld.distinct > 0 && ld.steps > 0 {
			perStep = ld.executions / float64(ld.distinct) / ld.steps
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %.0f | %.2f | %.1f s | %s |\n", ld.name, ld.calls, ld.errors, ms(ld.p50), ms(ld.p99), ms(ld.p99First), ms(ld.p99Warm), ld.executions, perStep, ld.evalSeconds, memoryCells(ld, heapStart))
	}
	return b.String()
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
