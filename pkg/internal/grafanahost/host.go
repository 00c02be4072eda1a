// Package grafanahost plays Grafana's part of the plugin protocol in tests:
// it builds the real plugin binary, starts it with hashicorp/go-plugin and
// the SDK's handshake constants exactly as Grafana does, and calls the
// plugin over gRPC. Nothing here is a fake of the plugin.
package grafanahost

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/grpcplugin"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
)

// PluginJSON is the part of plugin.json Grafana reads to start a backend.
type PluginJSON struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Backend     bool   `json:"backend"`
	Executable  string `json:"executable"`
	Alerting    bool   `json:"alerting"`
	Annotations bool   `json:"annotations"`
	// Streaming makes Grafana route the data source's live channels
	// (ds/<uid>/<path>) to the plugin's stream service.
	Streaming bool `json:"streaming"`
}

// Host is a started plugin process and its gRPC clients.
type Host struct {
	Plugin PluginJSON
	client *goplugin.Client
	data   grpcplugin.DataClient
	diag   grpcplugin.DiagnosticsClient
	res    grpcplugin.ResourceClient
	stream grpcplugin.StreamClient
	// seen are the data source instances (UID and Updated, which together
	// make Grafana's instance key) calls went to, for Instances.
	seen sync.Map
}

// RepoRoot finds the module root from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// Build compiles the plugin into a fresh temp dir laid out like a Grafana
// plugin folder (plugin.json beside <executable>_<os>_<arch>) and returns it.
// It builds as the SDK's mage targets do: cgo-free, with ReleaseTags.
func Build(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(root, "plugin.json"))
	if err != nil {
		t.Fatalf("read plugin.json: %v", err)
	}
	var pj PluginJSON
	if err := json.Unmarshal(raw, &pj); err != nil {
		t.Fatalf("parse plugin.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o600); err != nil {
		t.Fatalf("write plugin.json: %v", err)
	}
	exe := filepath.Join(dir, pj.Executable+"_"+runtime.GOOS+"_"+strings.ToLower(runtime.GOARCH))
	cmd := exec.Command("go", "build", "-tags", ReleaseTags, "-o", exe, "./pkg")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	return dir
}

// ReleaseTags are the build tags of the SDK's release build (its mage
// targets), so the tests launch the plugin that ships.
const ReleaseTags = "arrow_json_stdlib"

// LaunchOptions adds to what Launch does.
type LaunchOptions struct {
	// Env is added to the plugin's environment (e.g. Grafana's
	// GF_PLUGIN_PROFILING_* variables).
	Env []string
	// Log receives the plugin's log output as Grafana's host logs it
	// (go-plugin re-logs the plugin's stderr), at every level.
	Log io.Writer
}

// Launch starts the plugin in dir the way Grafana does and dispenses the
// data, diagnostics, resource and stream services. The process is killed at cleanup.
func Launch(t testing.TB, dir string) *Host {
	t.Helper()
	return LaunchWith(t, dir, LaunchOptions{})
}

// LaunchWith is Launch with options.
func LaunchWith(t testing.TB, dir string, o LaunchOptions) *Host {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "plugin.json"))
	if err != nil {
		t.Fatalf("read plugin.json: %v", err)
	}
	h := &Host{}
	if err := json.Unmarshal(raw, &h.Plugin); err != nil {
		t.Fatalf("parse plugin.json: %v", err)
	}
	if !h.Plugin.Backend {
		t.Fatalf("plugin.json: backend is false; Grafana would not start %s", h.Plugin.Executable)
	}
	exe := filepath.Join(dir, h.Plugin.Executable+"_"+runtime.GOOS+"_"+strings.ToLower(runtime.GOARCH))
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "GF_VERSION=12.4.0"), o.Env...)
	logger := hclog.New(&hclog.LoggerOptions{Output: io.Discard})
	if o.Log != nil {
		logger = hclog.New(&hclog.LoggerOptions{Output: o.Log, Level: hclog.Trace, JSONFormat: true})
	}
	h.client = goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  grpcplugin.ProtocolVersion,
			MagicCookieKey:   grpcplugin.MagicCookieKey,
			MagicCookieValue: grpcplugin.MagicCookieValue,
		},
		Plugins: map[string]goplugin.Plugin{
			"data":        &grpcplugin.DataGRPCPlugin{},
			"diagnostics": &grpcplugin.DiagnosticsGRPCPlugin{},
			"resource":    &grpcplugin.ResourceGRPCPlugin{},
			"stream":      &grpcplugin.StreamGRPCPlugin{},
		},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           logger,
		StartTimeout:     30 * time.Second,
	})
	t.Cleanup(h.client.Kill)
	h.dispense(t)
	return h
}

func (h *Host) dispense(t testing.TB) {
	t.Helper()
	rpc, err := h.client.Client()
	if err != nil {
		t.Fatalf("start plugin (handshake): %v", err)
	}
	get := func(name string) any {
		raw, err := rpc.Dispense(name)
		if err != nil {
			t.Fatalf("dispense %s: %v", name, err)
		}
		return raw
	}
	h.data = get("data").(grpcplugin.DataClient)
	h.diag = get("diagnostics").(grpcplugin.DiagnosticsClient)
	h.res = get("resource").(grpcplugin.ResourceClient)
	h.stream = get("stream").(grpcplugin.StreamClient)
}

// Kill stops the plugin process, as Grafana does when it shuts down.
func (h *Host) Kill() { h.client.Kill() }

// PluginContext builds what Grafana sends with every call for a data source.
func (h *Host) PluginContext(ds backend.DataSourceInstanceSettings) backend.PluginContext {
	if ds.UID == "" {
		ds.UID = "vllm-test"
	}
	if ds.Updated.IsZero() {
		ds.Updated = time.Unix(1_700_000_000, 0)
	}
	ds.Type = h.Plugin.ID
	h.seen.Store(ds.UID+"@"+ds.Updated.String(), true)
	return backend.PluginContext{PluginID: h.Plugin.ID, OrgID: 1, DataSourceInstanceSettings: &ds,
		GrafanaConfig: backend.NewGrafanaCfg(map[string]string{"GF_APP_URL": "http://localhost:3000"})}
}

// CheckHealth calls the diagnostics service as "Save & test" does.
func (h *Host) CheckHealth(t testing.TB, ds backend.DataSourceInstanceSettings) *backend.CheckHealthResult {
	t.Helper()
	pc := backend.ToProto().PluginContext(h.PluginContext(ds))
	resp, err := h.diag.CheckHealth(ctx(t), &pluginv2.CheckHealthRequest{PluginContext: pc})
	if err != nil {
		t.Fatalf("CheckHealth over gRPC: %v", err)
	}
	return backend.FromProto().CheckHealthResponse(resp)
}

// QueryData calls the data service; headers carry e.g. FromAlert.
func (h *Host) QueryData(t testing.TB, ds backend.DataSourceInstanceSettings, headers map[string]string, queries ...backend.DataQuery) *backend.QueryDataResponse {
	t.Helper()
	req := &backend.QueryDataRequest{PluginContext: h.PluginContext(ds), Headers: headers, Queries: queries}
	resp, err := h.data.QueryData(ctx(t), backend.ToProto().QueryDataRequest(req))
	if err != nil {
		t.Fatalf("QueryData over gRPC: %v", err)
	}
	out, err := backend.FromProto().QueryDataResponse(resp)
	if err != nil {
		t.Fatalf("decode QueryData response: %v", err)
	}
	return out
}

// QueryDataErr is QueryData for callers that run many requests at once
// (load tests): it returns the transport error instead of failing the test.
func (h *Host) QueryDataErr(ctx context.Context, ds backend.DataSourceInstanceSettings, headers map[string]string, queries ...backend.DataQuery) (*backend.QueryDataResponse, error) {
	req := &backend.QueryDataRequest{PluginContext: h.PluginContext(ds), Headers: headers, Queries: queries}
	resp, err := h.data.QueryData(ctx, backend.ToProto().QueryDataRequest(req))
	if err != nil {
		return nil, err
	}
	return backend.FromProto().QueryDataResponse(resp)
}

// Instances is how many data source instances (distinct UID and
// Updated) the host has sent calls for: the plugin keeps one executor,
// with its own cache budget, per instance.
func (h *Host) Instances() int {
	n := 0
	h.seen.Range(func(any, any) bool { n++; return true })
	return n
}

// Pid is the plugin process' id (to read its memory use), 0 if unknown.
func (h *Host) Pid() int {
	if rc := h.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// CallResource calls a resource route (path without leading slash).
func (h *Host) CallResource(t testing.TB, ds backend.DataSourceInstanceSettings, method, path string, body []byte) *backend.CallResourceResponse {
	t.Helper()
	// Grafana sends the path without the query string and the URL with it.
	p, _, _ := strings.Cut(path, "?")
	req := &backend.CallResourceRequest{PluginContext: h.PluginContext(ds), Method: method, Path: p, URL: path, Body: body}
	stream, err := h.res.CallResource(ctx(t), backend.ToProto().CallResourceRequest(req))
	if err != nil {
		t.Fatalf("CallResource over gRPC: %v", err)
	}
	var out *backend.CallResourceResponse
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("CallResource stream: %v", err)
		}
		part := backend.FromProto().CallResourceResponse(msg)
		if out == nil {
			out = part
			continue
		}
		out.Body = append(out.Body, part.Body...)
	}
	return out
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
