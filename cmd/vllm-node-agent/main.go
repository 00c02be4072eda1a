// Command vllm-node-agent runs on each GPU node of a vLLM fleet. It reads
// the GPUs through NVML, maps each GPU process to the vLLM server that owns
// it, and serves GET /v1/gpus (JSON), GET /metrics (Prometheus text) and
// GET /healthz. With --simulate N it serves N simulated GPUs instead, for
// demos and tests on machines without a GPU.
//
// Build it with cgo (go-nvml loads libnvidia-ml.so.1 at run time):
//
//	CGO_CFLAGS="-O2 -Wno-deprecated-declarations" go build ./cmd/vllm-node-agent
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/inferops/vllm-datasource/pkg/nodeagent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vllm-node-agent:", err)
		stop()
		os.Exit(1)
	}
}

// version is the release this binary belongs to; scripts/package.sh sets it
// with -ldflags "-X main.version=<package.json version>".
var version = "dev"

// options are the command-line flags.
type options struct {
	listen       string
	node         string
	instanceHost string
	procRoot     string
	cacheTTL     time.Duration
	tokenFile    string
	simulate     int
	follow       []string
	simDelay     time.Duration
	podResources string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	host, _ := os.Hostname()
	o := options{}
	fs := flag.NewFlagSet("vllm-node-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", nodeagent.DefaultListen, "address to serve on; loopback by default, set e.g. 0.0.0.0:9400 (with a token) to let Grafana or Prometheus reach it")
	fs.StringVar(&o.node, "node-name", host, "node name reported in /v1/gpus")
	fs.StringVar(&o.instanceHost, "instance-host", host, "host part of the vLLM instance label (<host>:<port>), as Prometheus names the vLLM servers of this node")
	fs.StringVar(&o.procRoot, "proc-root", "/proc", "proc file system to map GPU processes to vLLM servers (the host's, e.g. /host/proc with hostPID, in a container)")
	fs.DurationVar(&o.cacheTTL, "cache-ttl", nodeagent.DefaultCacheTTL, "how long one NVML reading is served; concurrent requests share one reading")
	fs.StringVar(&o.podResources, "pod-resources-socket", "", "kubelet pod-resources socket (e.g. "+nodeagent.DefaultPodResourcesSocket+"): label each GPU with the namespace, pod and container it is allocated to, as on Kubernetes; empty: bare metal")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token required on /v1/gpus and /metrics (else $"+nodeagent.TokenEnv+"; none means open)")
	fs.IntVar(&o.simulate, "simulate", 0, "serve N simulated H100-like GPUs instead of reading NVML")
	follow := fs.String("follow", "", "with --simulate: comma-separated vllm-sim /metrics URLs; GPU i follows the i-th engine's running requests and KV-cache usage")
	fs.DurationVar(&o.simDelay, "sim-delay", 0, "with --simulate: latency added to every response")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if *showVersion {
		fmt.Fprintln(stderr, "vllm-node-agent", version)
		return options{}, flag.ErrHelp
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.follow = splitList(*follow)
	return o, o.validate()
}

func (o options) validate() error {
	switch {
	case o.simulate < 0:
		return fmt.Errorf("--simulate %d: want a number of GPUs", o.simulate)
	case o.simulate == 0 && (len(o.follow) > 0 || o.simDelay != 0):
		return errors.New("--follow and --sim-delay need --simulate N")
	case o.simDelay < 0 || o.cacheTTL < 0:
		return errors.New("--sim-delay and --cache-ttl must not be negative")
	case o.node == "" || o.instanceHost == "":
		return errors.New("--node-name and --instance-host must not be empty (the hostname is unknown)")
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// run starts the agent and serves until ctx ends. ready, when set, gets the
// address it listens on.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(addr string)) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	token, err := nodeagent.LoadToken(o.tokenFile, getenv(nodeagent.TokenEnv))
	if err != nil {
		return err
	}
	src, closeSrc, err := source(o)
	if err != nil {
		return err
	}
	defer closeSrc()
	h := nodeagent.NewHandler(nodeagent.Config{Node: o.node, Source: nodeagent.NewCached(src, o.cacheTTL), Token: token, Delay: o.simDelay, Logger: logger})
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	logStart(logger, o, ln.Addr(), token != "")
	if ready != nil {
		ready(ln.Addr().String())
	}
	return nodeagent.Run(ctx, nodeagent.NewServer(o.listen, h), ln)
}

// source picks simulated GPUs or NVML with the /proc mapping, and adds
// the kubelet's pod mapping when its socket is given.
func source(o options) (nodeagent.Source, func(), error) {
	src, closeFn, err := readings(o)
	if err != nil || o.podResources == "" {
		return src, closeFn, err
	}
	pr, err := nodeagent.DialPodResources(o.podResources)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return nodeagent.WithPodMapping(src, pr), func() { _ = pr.Close(); closeFn() }, nil
}

func readings(o options) (nodeagent.Source, func(), error) {
	if o.simulate > 0 {
		s, err := nodeagent.NewSimulated(nodeagent.SimConfig{GPUs: o.simulate, Node: o.node, Host: o.instanceHost, Follow: o.follow})
		return s, func() {}, err
	}
	src, closeFn, err := openNVML()
	if err != nil {
		return nil, nil, err
	}
	return nodeagent.WithProcMapping(src, nodeagent.ProcMapper{Root: o.procRoot, Host: o.instanceHost}), closeFn, nil
}

func logStart(logger *slog.Logger, o options, addr net.Addr, auth bool) {
	mode := "nvml"
	if o.simulate > 0 {
		mode = fmt.Sprintf("simulate %d GPUs", o.simulate)
	}
	logger.Info("vllm-node-agent listening", "addr", addr.String(), "source", mode, "node", o.node, "token", auth)
	if tcp, ok := addr.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !auth {
		logger.Warn("listening beyond loopback without a bearer token: anyone who can reach this port can read the GPU data; set --token-file or " + nodeagent.TokenEnv)
	}
}
