package agentapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/nodeagent"
)

const fleetSize = 1000

// BenchmarkFanOut1000 fetches /v1/gpus from 1,000 simulated agents (the
// agent's own handler and 8 simulated GPUs each, on loopback, hosted by a
// child process) and compares one fan-out with one agent's latency:
//
//	x-single   fan-out time ÷ one agent's median latency (goal ≤ 2)
//	x-ideal    fan-out time ÷ ceil(1000/pool) × one agent's latency, the
//	           best a pool of that size can do
//	single-ms  one agent's median latency; cold-ms the first fan-out, which
//	           opens every connection
//	peak-heap-MB / sys-delta-MB  the client's peak HeapInuse while fanning
//	           out (garbage included) and the growth of its Sys
//	result-MB  live heap held by one Result of 1,000 reports, after a GC
//	client-cpu-ms  CPU the client spends per fan-out (the agents' CPU is
//	           the child's and not counted)
//
// delay is added by each agent (--sim-delay) to stand in for the network
// and the NVML read; pool is Options.Concurrency. The agents and the client
// share the machine's cores. The child needs about 2,000 file descriptors
// (a listener and a connection per agent), the client about 1,000.
func BenchmarkFanOut1000(b *testing.B) {
	requireFDs(b, 2*fleetSize+200)
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		urls := startFleet(b, fleetSize, delay)
		for _, pool := range []int{agentapi.DefaultConcurrency, fleetSize} {
			b.Run(fmt.Sprintf("delay=%s/pool=%d", delay, pool), func(b *testing.B) { benchFanOut(b, urls, pool) })
		}
	}
}

func requireFDs(b *testing.B, need uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < need {
		b.Skipf("needs %d open files, ulimit -n is %d", need, lim.Cur)
	}
}

// fleetEnv makes the test binary a fleet host instead of running tests:
// "N,DELAY" starts N simulated agents on loopback, prints their URLs and
// "ready", and serves until its stdin closes.
const fleetEnv = "VLLM_AGENT_BENCH_FLEET"

// TestMain lets the benchmark run its agents in a child process, so the
// memory it reports is the client's own.
func TestMain(m *testing.M) {
	if spec := os.Getenv(fleetEnv); spec != "" {
		if err := hostFleet(spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "fleet host:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func hostFleet(spec string, stdin io.Reader, stdout io.Writer) error {
	var n int
	var delay time.Duration
	nStr, dStr, _ := strings.Cut(spec, ",")
	n, err := strconv.Atoi(nStr)
	if err != nil {
		return fmt.Errorf("agents %q: %w", nStr, err)
	}
	if delay, err = time.ParseDuration(dStr); err != nil {
		return fmt.Errorf("delay %q: %w", dStr, err)
	}
	for i := range n {
		node := fmt.Sprintf("node-%04d", i)
		src, err := nodeagent.NewSimulated(nodeagent.SimConfig{GPUs: 8, Node: node, Host: node})
		if err != nil {
			return err
		}
		srv := httptest.NewServer(nodeagent.NewHandler(nodeagent.Config{Node: node, Source: nodeagent.NewCached(src, time.Hour), Delay: delay}))
		defer srv.Close()
		fmt.Fprintln(stdout, srv.URL)
	}
	fmt.Fprintln(stdout, "ready")
	_, _ = io.Copy(io.Discard, stdin) // until the benchmark closes it
	return nil
}

// startFleet starts n agents in a child process and returns their URLs;
// they stop with b.
func startFleet(b *testing.B, n int, delay time.Duration) []string {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%s", fleetEnv, n, delay))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	var urls []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
		urls = append(urls, sc.Text())
	}
	if len(urls) != n {
		b.Fatalf("fleet host started %d of %d agents", len(urls), n)
	}
	return urls
}

func benchFanOut(b *testing.B, urls []string, pool int) {
	c, err := agentapi.NewClient(agentapi.Options{Concurrency: pool, Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cold := timeFetch(b, c, urls)
	single := medianLatency(b, c, urls[:1], 31)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := watchHeap()
	cpu0 := cpuTime(b)
	iters := 0
	var last agentapi.Result
	for b.Loop() {
		if last = c.Fetch(ctx, urls); len(last.Errors) > 0 {
			b.Fatalf("%d agents failed, first: %v", len(last.Errors), last.Errors[0])
		}
		iters++
	}
	perOp := b.Elapsed() / time.Duration(iters)
	cpuPerOp := (cpuTime(b) - cpu0) / time.Duration(iters)
	heapPeak := peak()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	runtime.KeepAlive(last)

	rounds := math.Ceil(float64(len(urls)) / float64(pool))
	b.ReportMetric(float64(perOp)/float64(single), "x-single")
	b.ReportMetric(float64(perOp)/(rounds*float64(single)), "x-ideal")
	b.ReportMetric(ms(single), "single-ms")
	b.ReportMetric(ms(cold), "cold-ms")
	b.ReportMetric(ms(cpuPerOp), "client-cpu-ms")
	b.ReportMetric(float64(heapPeak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(after.Sys-before.Sys)/(1<<20), "sys-delta-MB")
	b.ReportMetric((float64(live.HeapAlloc)-float64(before.HeapAlloc))/(1<<20), "result-MB")
}

// cpuTime is the client process's user plus system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func timeFetch(b *testing.B, c *agentapi.Client, urls []string) time.Duration {
	start := time.Now()
	res := c.Fetch(context.Background(), urls)
	d := time.Since(start)
	if len(res.Errors) > 0 {
		b.Fatalf("%d agents failed, first: %v", len(res.Errors), res.Errors[0])
	}
	return d
}

func medianLatency(b *testing.B, c *agentapi.Client, urls []string, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = timeFetch(b, c, urls)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

// watchHeap samples HeapInuse every millisecond until the returned
// function is called, which returns the peak.
func watchHeap() func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}
