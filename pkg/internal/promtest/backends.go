package promtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Versions of the back ends built by scripts/backends.sh; change them there
// and here together.
const (
	Prometheus3Version = "3.16.0"
	ThanosVersion      = "0.42.4"
)

// Kind is a metrics back end the integration tests run against.
type Kind string

// The back ends. The zero Kind is Debian's Prometheus 2.
const (
	Prometheus2     Kind = ""
	Prometheus3     Kind = "prometheus-3"
	VictoriaMetrics Kind = "victoria-metrics"
)

// Name is the back end's name in test names and messages.
func (k Kind) Name() string {
	if k == Prometheus2 {
		return "prometheus-2"
	}
	return string(k)
}

// Kinds are the single-server back ends every query-type test runs on.
func Kinds() []Kind { return []Kind{Prometheus2, Prometheus3, VictoriaMetrics} }

// CacheBin is where scripts/backends.sh leaves a built binary.
func CacheBin(name string) string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "inferops-vllm", "bin", name)
}

// binaryFor finds the executable of a back end, or fails the test saying
// how to get it. A missing back end is a failure, never a skip: the
// README's test command installs and builds all of them.
func binaryFor(t testing.TB, k Kind) string {
	return BinaryFor(t, k)
}

// BinaryFor is the server binary of back end k (installed or built by the
// README's test command), for tests that run the real tool directly.
func BinaryFor(t testing.TB, k Kind) string {
	t.Helper()
	switch k {
	case Prometheus2:
		return Binary(t)
	case Prometheus3:
		return cached(t, "PROMETHEUS3_BIN", "prometheus-"+Prometheus3Version, "bash scripts/backends.sh prometheus")
	case VictoriaMetrics:
		return lookPath(t, "VICTORIA_METRICS_BIN", "victoria-metrics", "apt-get install -y victoria-metrics")
	}
	t.Fatalf("unknown back end %q", k)
	return ""
}

// Promtool3Binary finds Prometheus 3's promtool, built by scripts/backends.sh
// (Debian's promtool is 2.42's, which rejects fields only 3.x reads).
func Promtool3Binary(t testing.TB) string {
	t.Helper()
	return cached(t, "PROMTOOL3_BIN", "promtool-"+Prometheus3Version, "bash scripts/backends.sh promtool")
}

// ThanosBinary finds the thanos executable built by scripts/backends.sh.
func ThanosBinary(t testing.TB) string {
	t.Helper()
	return cached(t, "THANOS_BIN", "thanos-"+ThanosVersion+"-slicelabels", "bash scripts/backends.sh thanos")
}

func cached(t testing.TB, env, name, how string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = CacheBin(name)
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("%s is not built at %s: run the README's test command (it runs %s) or set %s", name, p, how, env)
	}
	return p
}

func lookPath(t testing.TB, env, name, how string) string {
	t.Helper()
	for _, p := range []string{os.Getenv(env), name, "/usr/bin/" + name} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("%s is not installed: run the README's test command (it runs %s) or set %s", name, how, env)
	return ""
}

// args are the command-line flags of a back end serving on addr with its
// data in dir and the scrape config cfg.
// args are the command line of back end k with its TSDB in data.
func args(k Kind, cfg, data, addr string) []string {
	if k == VictoriaMetrics {
		return []string{"-promscrape.config=" + cfg, "-storageDataPath=" + data,
			"-httpListenAddr=" + addr, "-loggerLevel=WARN", "-retentionPeriod=1d",
			// The generated config has Prometheus-only fields (evaluation_interval).
			"-promscrape.config.strictParse=false",
			// VictoriaMetrics hides the newest 30s of samples from queries
			// by default (-search.latencyOffset); the tests compare with
			// what the simulator did a second ago, as on Prometheus.
			"-search.latencyOffset=0s"}
	}
	return []string{"--config.file=" + cfg, "--storage.tsdb.path=" + data,
		"--web.listen-address=" + addr, "--log.level=warn",
		// Hidden flag: apply discovered targets at once instead of after 5s.
		"--scrape.discovery-reload-interval=100ms"}
}

// readyPath is the endpoint that answers 200 once the back end serves queries.
func readyPath(k Kind) string {
	if k == VictoriaMetrics {
		return "/health"
	}
	return "/-/ready"
}

func (k Kind) String() string { return k.Name() }
