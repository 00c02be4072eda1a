package fleetbench

import (
	"bufio"
	"fmt"
	"io"
)

// WriteFleetTableMetrics writes what the fleet query type reads for every
// engine (queue, KV, preemptions, queue-time and TTFT histograms, finished
// requests by reason, generation tokens) and the up series of each
// instance, as OpenMetrics for promtool's backfill.
func WriteFleetTableMetrics(w io.Writer, f Fleet) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	points := int(f.End.Sub(f.Start)/f.Step) + 1
	gauge := func(name string, value func(i, j int) float64) {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", name)
		for i := range f.Engines {
			writeSeries(bw, name, engineLabels(i), f, points, func(j int) float64 { return value(i, j) })
		}
	}
	gauge("vllm:num_requests_running", func(i, j int) float64 { return float64((i*3 + j) % 64) })
	gauge("vllm:num_requests_waiting", func(i, j int) float64 { return float64((i*7 + j) % 23 * ((i % 5) + 1)) })
	gauge("vllm:kv_cache_usage_perc", func(i, j int) float64 { return float64((i*11+j)%100) / 100 })
	counter := func(name, extra string, value func(i, j int) float64) {
		fmt.Fprintf(bw, "# TYPE %s counter\n", name)
		for i := range f.Engines {
			writeSeries(bw, name+"_total", engineLabels(i)+extra, f, points, func(j int) float64 { return value(i, j) })
		}
	}
	counter("vllm:num_preemptions", "", func(i, j int) float64 { return float64(j * (i % 3)) })
	counter("vllm:generation_tokens", "", func(i, j int) float64 { return float64(j * 900 * (1 + i%4)) })
	fmt.Fprintf(bw, "# TYPE vllm:request_success counter\n")
	for i := range f.Engines {
		for _, reason := range []string{"stop", "abort"} {
			share := map[string]float64{"stop": 0.98, "abort": 0.02}[reason]
			writeSeries(bw, "vllm:request_success_total", engineLabels(i)+`,finished_reason="`+reason+`"`, f, points,
				func(j int) float64 { return float64(int(float64(j*15*(1+i%4)) * share)) })
		}
	}
	for _, h := range []string{"vllm:request_queue_time_seconds", "vllm:time_to_first_token_seconds"} {
		fmt.Fprintf(bw, "# TYPE %s histogram\n", h)
		for i := range f.Engines {
			lbl := engineLabels(i)
			count := func(j int) float64 { return float64(j * 15 * (1 + i%4)) }
			for b, le := range queueBuckets {
				share := []float64{0.5, 0.8, 0.95, 1}[b]
				writeSeries(bw, h+"_bucket", lbl+`,le="`+le+`"`, f, points, func(j int) float64 { return float64(int(count(j) * share)) })
			}
			writeSeries(bw, h+"_count", lbl, f, points, count)
			writeSeries(bw, h+"_sum", lbl, f, points, func(j int) float64 { return count(j) * 0.4 })
		}
	}
	fmt.Fprintf(bw, "# TYPE up gauge\n")
	for i := 0; i < f.Engines; i += 2 {
		writeSeries(bw, "up", fmt.Sprintf(`instance="%s",job="vllm"`, Instance(i)), f, points, func(int) float64 { return 1 })
	}
	// target_info as an OTLP-fed store keeps it (Prometheus 3's OTLP
	// receiver, UnderscoreEscapingWithSuffixes): the pod and namespace of
	// each instance, which the engine series above do not carry; a data
	// source that names servers by pod joins them on (the join bench).
	fmt.Fprintf(bw, "# TYPE target_info gauge\n")
	for i := 0; i < f.Engines; i += 2 {
		writeSeries(bw, "target_info", fmt.Sprintf(`instance="%s",job="vllm",k8s_namespace_name="inference",k8s_pod_name="vllm-%d"`, Instance(i), i/2),
			f, points, func(int) float64 { return 1 })
	}
	fmt.Fprintf(bw, "# EOF\n")
	return bw.Flush()
}
