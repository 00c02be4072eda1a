//go:build unix

package sim

import (
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cpuTime is the process's user plus system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fleet256 is 128 instances of two data-parallel engines at the default
// (realistic) load, warmed up to steady state.
func fleet256(b *testing.B) *Fleet {
	insts := make([]InstanceConfig, 128)
	for i := range insts {
		insts[i] = InstanceConfig{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 2}
	}
	insts[0].RateFactor = 2 // one hot instance, as in the demo
	f := newTestFleet(b, nil, insts...)
	require.NoError(b, f.Advance(time.Minute))
	return f
}

// BenchmarkFleet256RealTime reports the CPU the wall-clock driver of 256
// engines costs, in cores (CPU seconds per wall second).
func BenchmarkFleet256RealTime(b *testing.B) {
	f := fleet256(b)
	_, err := f.Start(b.Context())
	require.NoError(b, err)
	measureCores(b)
}

// BenchmarkFleet256RealTimeScraped adds a Prometheus-like scraper that
// fetches every instance's /metrics once per 15 s.
func BenchmarkFleet256RealTimeScraped(b *testing.B) {
	f := fleet256(b)
	eps, err := f.Start(b.Context())
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	go scrapeLoop(ctx, eps, 15*time.Second)
	measureCores(b)
}

func measureCores(b *testing.B) {
	time.Sleep(100 * time.Millisecond) // let the driver settle
	cpu0, wall0 := cpuTime(b), time.Now()
	for b.Loop() {
		time.Sleep(250 * time.Millisecond)
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Since(wall0)), "cores")
}

// scrapeLoop spreads one scrape of every endpoint evenly over interval.
func scrapeLoop(ctx context.Context, eps []Endpoint, interval time.Duration) {
	t := time.NewTicker(interval / time.Duration(len(eps)))
	defer t.Stop()
	for i := 0; ; i = (i + 1) % len(eps) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+eps[i].Addr+"/metrics", nil)
		if err != nil {
			return
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
}

// BenchmarkFleet256Advance runs one simulated second of 256 engines per
// op with no wall clock; "cores" is the CPU needed to keep up in real time.
func BenchmarkFleet256Advance(b *testing.B) {
	f := fleet256(b)
	cpu0 := cpuTime(b)
	n := 0
	for b.Loop() {
		require.NoError(b, f.Advance(time.Second))
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Duration(n)*time.Second), "cores")
}

// BenchmarkScrape renders one two-engine V1 instance.
func BenchmarkScrape(b *testing.B) {
	f := newTestFleet(b, nil, InstanceConfig{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 2})
	require.NoError(b, f.Advance(time.Minute))
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, f.WriteMetrics(io.Discard, 0))
	}
}
