package nodeagent

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// kubelet is a pod-resources server as the kubelet serves it: List over
// gRPC on a unix socket.
type kubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	pods []*podresourcesv1.PodResources
	err  error
}

func (k *kubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	if k.err != nil {
		return nil, k.err
	}
	return &podresourcesv1.ListPodResourcesResponse{PodResources: k.pods}, nil
}

// serveKubelet starts the server on a socket in a temp dir.
func serveKubelet(t *testing.T, k *kubelet) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(srv, k)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return sock
}

func devices(resource string, ids ...string) *podresourcesv1.ContainerDevices {
	return &podresourcesv1.ContainerDevices{ResourceName: resource, DeviceIds: ids}
}

func TestPodMapping(t *testing.T) {
	k := &kubelet{pods: []*podresourcesv1.PodResources{
		{Name: "vllm-0", Namespace: "inference", Containers: []*podresourcesv1.ContainerResources{
			{Name: "vllm", Devices: []*podresourcesv1.ContainerDevices{devices("nvidia.com/gpu", "GPU-a", "GPU-b")}},
			{Name: "sidecar"},
		}},
		{Name: "vllm-1", Namespace: "batch", Containers: []*podresourcesv1.ContainerResources{
			{Name: "vllm", Devices: []*podresourcesv1.ContainerDevices{devices("nvidia.com/mig-1g.10gb", "MIG-c")}},
		}},
		{Name: "nic-user", Namespace: "net", Containers: []*podresourcesv1.ContainerResources{
			{Name: "app", Devices: []*podresourcesv1.ContainerDevices{devices("example.com/nic", "GPU-d")}},
		}},
	}}
	pr, err := DialPodResources(serveKubelet(t, k))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pr.Close() })

	gpus := []agentapi.GPU{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "MIG-c"}, {Index: 3, UUID: "GPU-d"}}
	src := WithPodMapping(SourceFunc(func(context.Context) ([]agentapi.GPU, error) {
		return append([]agentapi.GPU(nil), gpus...), nil
	}), pr)
	got, err := src.GPUs(context.Background())
	require.NoError(t, err)
	type where struct{ ns, pod, container string }
	var at []where
	for _, g := range got {
		at = append(at, where{g.Namespace, g.Pod, g.Container})
		require.Empty(t, g.Error)
	}
	require.Equal(t, []where{
		{"inference", "vllm-0", "vllm"}, {"inference", "vllm-0", "vllm"}, // tensor parallel: two GPUs, one pod
		{"batch", "vllm-1", "vllm"}, // a MIG device
		{"", "", ""},                // another resource's device id is not a GPU allocation
	}, at)

	t.Run("a kubelet that fails leaves the readings, with the reason", func(t *testing.T) {
		k.err = status.Error(codes.Unavailable, "kubelet restarting")
		got, err := src.GPUs(context.Background())
		require.NoError(t, err)
		require.Len(t, got, 4)
		for _, g := range got {
			require.Empty(t, g.Pod)
			require.Contains(t, g.Error, "kubelet restarting")
		}
		k.err = nil
	})

	t.Run("no kubelet at the socket", func(t *testing.T) {
		gone, err := DialPodResources(filepath.Join(t.TempDir(), "none.sock"))
		require.NoError(t, err, "dialling is lazy: the agent starts before the kubelet")
		defer gone.Close()
		_, err = gone.Allocations(context.Background())
		require.ErrorContains(t, err, "pod-resources")
	})
}
