// Package fleetbench measures the plugin against the raw Prometheus HTTP
// API on a large backfilled fleet: it writes vLLM V1 metrics for N engines
// as OpenMetrics, which promtool turns into TSDB blocks for a real
// Prometheus, then runs each query type through the plugin binary over
// gRPC and the same PromQL over HTTP, interleaved, plus a many-caller
// load. scripts/bench.sh runs it at full size; the normal test suite runs a
// small version so it cannot rot. It never asserts a timing.
package fleetbench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Fleet is the synthetic history to write.
type Fleet struct {
	Engines    int
	Start, End time.Time
	Step       time.Duration
}

// models are spread over the engines round-robin.
var models = []string{"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3", "google/gemma-2-9b-it"}

// queueBuckets are the histogram's upper bounds (fewer than vLLM's, to
// keep the backfill small; the queries do not depend on the boundaries).
var queueBuckets = []string{"0.3", "1", "5", "+Inf"}

// Labels of engine i: two data-parallel engines per instance.
func engineLabels(i int) string {
	inst := fmt.Sprintf("10.%d.%d.%d:8000", (i/2)/65536, ((i/2)/256)%256, (i/2)%256)
	return fmt.Sprintf(`instance="%s",engine="%d",model_name="%s",job="vllm"`, inst, i%2, models[(i/2)%len(models)])
}

// Instance returns engine i's instance label, for filters in the bench.
func Instance(i int) string {
	return fmt.Sprintf("10.%d.%d.%d:8000", (i/2)/65536, ((i/2)/256)%256, (i/2)%256)
}

// WriteOpenMetrics writes the fleet's history, family by family and series
// by series in time order, as promtool's backfill requires.
func WriteOpenMetrics(w io.Writer, f Fleet) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	points := int(f.End.Sub(f.Start)/f.Step) + 1
	gauge := func(name string, value func(i, j int) float64) {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", name)
		for i := range f.Engines {
			writeSeries(bw, name, engineLabels(i), f, points, func(j int) float64 { return value(i, j) })
		}
	}
	gauge("vllm:num_requests_running", func(i, j int) float64 { return float64((i*3 + j/12) % 64) })
	gauge("vllm:num_requests_waiting", func(i, j int) float64 { return float64((i*7 + j/6) % 23 * ((i % 5) + 1)) })
	gauge("vllm:kv_cache_usage_perc", func(i, j int) float64 { return float64((i*11+j)%100) / 100 })

	fmt.Fprintf(bw, "# TYPE vllm:num_preemptions counter\n")
	for i := range f.Engines {
		writeSeries(bw, "vllm:num_preemptions_total", engineLabels(i), f, points, func(j int) float64 {
			return float64(j/40 + (j/40)*(i%3)) // bursts every 40 steps
		})
	}

	fmt.Fprintf(bw, "# TYPE vllm:request_queue_time_seconds histogram\n")
	for i := range f.Engines {
		lbl := engineLabels(i)
		count := func(j int) float64 { return float64(j * (2 + i%4)) }
		for b, le := range queueBuckets {
			share := []float64{0.5, 0.8, 0.95, 1}[b]
			writeSeries(bw, "vllm:request_queue_time_seconds_bucket", lbl+`,le="`+le+`"`, f, points, func(j int) float64 { return float64(int(count(j) * share)) })
		}
		writeSeries(bw, "vllm:request_queue_time_seconds_count", lbl, f, points, count)
		writeSeries(bw, "vllm:request_queue_time_seconds_sum", lbl, f, points, func(j int) float64 { return count(j) * 0.4 })
	}
	fmt.Fprintf(bw, "# EOF\n")
	return bw.Flush()
}

func writeSeries(bw *bufio.Writer, name, labels string, f Fleet, points int, value func(j int) float64) {
	var line []byte
	for j := range points {
		ts := f.Start.Add(time.Duration(j) * f.Step)
		line = append(line[:0], name...)
		line = append(line, '{')
		line = append(line, labels...)
		line = append(line, "} "...)
		line = strconv.AppendFloat(line, value(j), 'g', -1, 64)
		line = append(line, ' ')
		line = strconv.AppendInt(line, ts.Unix(), 10)
		line = append(line, '\n')
		_, _ = bw.Write(line)
	}
}
