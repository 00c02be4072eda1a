// Command cadvisorhost is a test-only host over cAdvisor's own library
// (github.com/google/cadvisor's manager and metrics packages): it watches the
// machine's cgroups with cAdvisor's collectors and serves their series on
// /metrics exactly as the cadvisor binary does (same collector, same labels,
// same request options). cAdvisor's cmd module is not served by the Go module
// proxy, so the integration tests build this instead (scripts/backends.sh).
// It is its own Go module so that the plugin's go.mod never takes cAdvisor's
// dependencies.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/cadvisor/cache/memory"
	"github.com/google/cadvisor/container"
	v2 "github.com/google/cadvisor/info/v2"
	"github.com/google/cadvisor/manager"
	"github.com/google/cadvisor/metrics"
	"github.com/google/cadvisor/utils/sysfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve /metrics on; the chosen address is printed as 'listening on ADDR'")
	rawPrefixes := flag.String("raw_cgroup_prefix_whitelist", "", "comma-separated cgroup path prefixes to watch (empty: all)")
	klog.InitFlags(nil)
	flag.Parse()
	if err := run(*listen, *rawPrefixes); err != nil {
		fmt.Fprintln(os.Stderr, "cadvisorhost:", err)
		os.Exit(1)
	}
}

// included are cadvisor's default metrics (its binary ignores the same
// expensive sets: per-NUMA memory, TCP/UDP tables, per-process, hugetlb,
// referenced memory, topology, resctrl, cpuset).
func included() container.MetricSet {
	return container.AllMetrics.Difference(container.MetricSet{
		container.MemoryNumaMetrics: {}, container.NetworkTcpUsageMetrics: {}, container.NetworkUdpUsageMetrics: {},
		container.NetworkAdvancedTcpUsageMetrics: {}, container.ProcessSchedulerMetrics: {}, container.ProcessMetrics: {},
		container.HugetlbUsageMetrics: {}, container.ReferencedMemoryMetrics: {}, container.CPUTopologyMetrics: {},
		container.ResctrlMetrics: {}, container.CPUSetMetrics: {},
	})
}

func run(listen, rawPrefixes string) error {
	set := included()
	// HousekeepingConfigFlags are cadvisor's own flags
	// (-max_housekeeping_interval, -allow_dynamic_housekeeping;
	// -housekeeping_interval is the manager package's), with its defaults.
	m, err := manager.New(memory.New(2*time.Minute, nil), sysfs.NewRealSysFs(),
		manager.HousekeepingConfigFlags, set, http.DefaultClient,
		strings.Split(rawPrefixes, ","), nil, "", 0)
	if err != nil {
		return fmt.Errorf("cadvisor manager: %w", err)
	}
	if err := m.Start(); err != nil {
		return fmt.Errorf("cadvisor manager start: %w", err)
	}
	defer m.Stop()
	reg := prometheus.NewRegistry()
	// The request options of cadvisor's own /metrics handler
	// (cmd/internal/http): the latest sample of every container by name.
	opts := v2.RequestOptions{IdType: v2.TypeName, Count: 1, Recursive: true}
	reg.MustRegister(metrics.NewPrometheusCollector(m, metrics.DefaultContainerLabels, set, clock.RealClock{}, opts))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", listen, err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	go func() { _ = http.Serve(ln, mux) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return nil
}
