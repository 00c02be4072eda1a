package plugin_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// fakeKubelet serves the kubelet's pod-resources List over a unix socket,
// with allocations the test sets once it knows the agent's GPU UUIDs.
type fakeKubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	mu   sync.Mutex
	pods []*podresourcesv1.PodResources
}

func (k *fakeKubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return &podresourcesv1.ListPodResourcesResponse{PodResources: k.pods}, nil
}

func (k *fakeKubelet) allocate(namespace, pod string, uuids ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods = append(k.pods, &podresourcesv1.PodResources{Namespace: namespace, Name: pod, Containers: []*podresourcesv1.ContainerResources{
		{Name: "vllm", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: uuids}}}}})
}

// TestHostAgentPodMapping: a node agent (the real binary, simulated GPUs)
// labels its GPUs with the pods the kubelet's pod-resources socket names,
// and the plugin, under a Kubernetes profile, joins them to the vLLM pods
// in the gpu table and the top-k table's GPU columns.
func TestHostAgentPodMapping(t *testing.T) {
	t.Parallel()
	host := grafanahost.Launch(t, grafanahost.Build(t))
	bin := filepath.Join(t.TempDir(), "vllm-node-agent")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vllm-node-agent")
	build.Dir = grafanahost.RepoRoot(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	k := &fakeKubelet{}
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(srv, k)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	cfg, k8s := stackFleet(41)
	env := fleettest.Run(t, cfg)
	var groups []promtest.Group
	for i, addr := range env.Targets() {
		groups = append(groups, k8s[i].group(addr))
	}
	prom := promtest.Start(t, promtest.Options{Groups: groups, Relabel: operatorRelabel, MetricRelabel: stackRelabel})
	prom.WaitForSeries(t, `count_over_time(vllm:num_requests_waiting{namespace="llmd"}[1m]) >= 5`, 3, 60*time.Second)

	agentURL, _ := startAgent(t, bin, "gpu-node-k", "", "--simulate", "3", "--pod-resources-socket", sock)
	var before struct {
		GPUs []struct {
			UUID string `json:"uuid"`
			Pod  string `json:"pod"`
		} `json:"gpus"`
	}
	resp, err := http.Get(agentURL + "/v1/gpus")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&before))
	_ = resp.Body.Close()
	require.GreaterOrEqual(t, len(before.GPUs), 3)
	require.Empty(t, before.GPUs[0].Pod, "nothing allocated yet")
	k.allocate("llmd", "vllm-0", before.GPUs[0].UUID, before.GPUs[1].UUID)
	k.allocate("llmd", "vllm-1", before.GPUs[2].UUID)
	time.Sleep(1500 * time.Millisecond) // the agent's one-second reading cache

	js, err := json.Marshal(map[string]any{"scrapeInterval": "1s", "profile": "llm-d", "selector": `namespace="llmd"`, "agentUrls": []string{agentURL}})
	require.NoError(t, err)
	ds := backend.DataSourceInstanceSettings{UID: "pods", URL: prom.URL, JSONData: js}
	r := host.QueryData(t, ds, nil,
		at("G", `{"queryType":"gpu"}`),
		at("K", `{"queryType":"topk","k":2,"rankBy":"waiting","format":"table"}`))
	for ref, res := range r.Responses {
		require.NoError(t, res.Error, ref)
	}
	g := columns(r.Responses["G"].Frames[0])
	var instances []string
	for i := 0; i < g["vllm instance"].Len(); i++ {
		instances = append(instances, g["vllm instance"].At(i).(string))
	}
	require.Equal(t, []string{"llmd/vllm-0", "llmd/vllm-0", "llmd/vllm-1"}, instances[:3])

	kt := columns(r.Responses["K"].Frames[0])
	require.NotNil(t, kt["gpus"])
	for i := 0; i < 2; i++ {
		want := map[string]float64{"llmd/vllm-0": 2, "llmd/vllm-1": 1}[kt["instance"].At(i).(string)]
		require.Equal(t, want, num(kt["gpus"].At(i)), "GPUs joined by pod: %v", kt["instance"].At(i))
	}
}
