package fleetbench

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"
)

// Profiles of the cases' plugin side: with -bench.fleet.profile set, each
// table case (saturation, slo) is run back to back on the rules-on data
// source for -bench.fleet.profile.for while the plugin's pprof server
// records its CPU and its allocations over that window, and this process
// (the gRPC client, which decodes the frames as Grafana would) its CPU.
var (
	profileDir = flag.String("bench.fleet.profile", "", "write the plugin's CPU and allocation profiles of each table case to this directory")
	profileFor = flag.Duration("bench.fleet.profile.for", 30*time.Second, "how long each case runs back to back while profiled")
)

// profileCases profiles each table case in turn (see profileDir). The
// ranges end one step apart after e.t0, inside the history written ahead
// of it; when they would pass its end they start over at e.t0 on a new
// data source instance (a cache of its own), so no answer comes from the
// plugin's cache and none is empty.
func (e *env) profileCases(t *testing.T, on backend.DataSourceInstanceSettings, ahead time.Duration) {
	if *profileDir == "" {
		return
	}
	require.NoError(t, os.MkdirAll(*profileDir, 0o755))
	slots := max(1, int((ahead-2*time.Minute)/e.step))
	n := 0
	next := func() (backend.DataSourceInstanceSettings, time.Time) {
		ds := on
		ds.UID = fmt.Sprintf("%s-profile-%d", on.UID, n/slots)
		n++
		return ds, e.t0.Add(time.Duration(n%slots+1) * e.step)
	}
	for _, c := range tableCases() {
		slug := strings.Fields(c.name)[0]
		// What the process holds before (its data sources' caches): the
		// soft memory limit makes the collector run more often near it.
		heap := float64(heapAfterGC(t, e.pprof)) / (1 << 20)
		ran := e.profileCase(t, c, slug, next)
		t.Logf("profiled %s: %d queries in %s (plugin heap after a GC before them: %.0f MiB, %d instances), profiles in %s",
			c.name, ran, *profileFor, heap, e.host.Instances(), *profileDir)
	}
}

// profileCase runs c back to back for profileFor, with the plugin's CPU
// profile and its allocation delta fetched over that window and this
// process's CPU profile beside them, and returns how many queries ran.
func (e *env) profileCase(t *testing.T, c benchCase, slug string, next func() (backend.DataSourceInstanceSettings, time.Time)) int {
	secs := max(1, int(profileFor.Seconds()))
	var wg sync.WaitGroup
	for _, p := range []struct{ path, file string }{
		{fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), slug + "-plugin-cpu.pprof"},
		{fmt.Sprintf("/debug/pprof/allocs?seconds=%d", secs), slug + "-plugin-allocs.pprof"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, e.savePprof(p.path, filepath.Join(*profileDir, p.file)))
		}()
	}
	client, err := os.Create(filepath.Join(*profileDir, slug+"-client-cpu.pprof"))
	require.NoError(t, err)
	defer client.Close()
	clientOn := pprof.StartCPUProfile(client) == nil // not when go test -cpuprofile holds it
	n := 0
	for deadline := time.Now().Add(*profileFor); n == 0 || time.Now().Before(deadline); n++ {
		ds, end := next()
		_, err := e.queryOn(ds, c, end)
		require.NoError(t, err, c.name)
	}
	if clientOn {
		pprof.StopCPUProfile()
	}
	wg.Wait()
	return n
}

// savePprof fetches one profile from the plugin's pprof server into file.
func (e *env) savePprof(path, file string) error {
	resp, err := (&http.Client{Timeout: *profileFor + time.Minute}).Get("http://" + e.pprof + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
