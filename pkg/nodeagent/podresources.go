package nodeagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// DefaultPodResourcesSocket is the kubelet's pod-resources socket, as
// dcgm-exporter reads it (mounted read-only from the host).
const DefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// podResourcesTimeout bounds one List call: the kubelet answers locally.
const podResourcesTimeout = 2 * time.Second

// PodResources asks the kubelet which container each GPU is allocated to.
type PodResources struct {
	conn   *grpc.ClientConn
	client podresourcesv1.PodResourcesListerClient
}

// DialPodResources connects to the kubelet's pod-resources socket (a
// unix socket path). The connection is made lazily, so a kubelet that is
// not up yet only fails readings, never the agent's start.
func DialPodResources(socket string) (*PodResources, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("pod-resources socket %s: %w", socket, err)
	}
	return &PodResources{conn: conn, client: podresourcesv1.NewPodResourcesListerClient(conn)}, nil
}

// Close closes the connection.
func (p *PodResources) Close() error { return p.conn.Close() }

// Allocation is the container a device is allocated to.
type Allocation struct{ Namespace, Pod, Container string }

// Allocations lists the GPUs allocated to containers, by device id (the
// GPU UUID, or a MIG device's UUID, as the NVIDIA device plugin reports
// them): resources nvidia.com/gpu and nvidia.com/mig-*.
func (p *PodResources) Allocations(ctx context.Context) (map[string]Allocation, error) {
	ctx, cancel := context.WithTimeout(ctx, podResourcesTimeout)
	defer cancel()
	resp, err := p.client.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("kubelet pod-resources List: %w", err)
	}
	out := map[string]Allocation{}
	for _, pod := range resp.GetPodResources() {
		for _, c := range pod.GetContainers() {
			for _, d := range c.GetDevices() {
				if !isNvidiaGPU(d.GetResourceName()) {
					continue
				}
				for _, id := range d.GetDeviceIds() {
					out[id] = Allocation{Namespace: pod.GetNamespace(), Pod: pod.GetName(), Container: c.GetName()}
				}
			}
		}
	}
	return out, nil
}

func isNvidiaGPU(resource string) bool {
	return resource == "nvidia.com/gpu" || strings.HasPrefix(resource, "nvidia.com/mig-")
}

// WithPodMapping wraps a Source so each GPU carries the namespace, pod and
// container the kubelet allocated it to. When the kubelet cannot answer,
// the readings are served unmapped, with the reason in each GPU's error.
func WithPodMapping(src Source, p interface {
	Allocations(context.Context) (map[string]Allocation, error)
}) Source {
	return SourceFunc(func(ctx context.Context) ([]agentapi.GPU, error) {
		gpus, err := src.GPUs(ctx)
		if err != nil {
			return nil, err
		}
		alloc, err := p.Allocations(ctx)
		for i := range gpus {
			if err != nil {
				gpus[i].Error = joinError(gpus[i].Error, "pod mapping: "+err.Error())
				continue
			}
			if a, ok := alloc[gpus[i].UUID]; ok {
				gpus[i].Namespace, gpus[i].Pod, gpus[i].Container = a.Namespace, a.Pod, a.Container
			}
		}
		return gpus, nil
	})
}

func joinError(have, add string) string {
	if have == "" {
		return add
	}
	return have + "; " + add
}
