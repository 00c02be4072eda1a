package models

import (
	"encoding/json"
	"fmt"
	"strings"
)

// QueryContainer answers each vLLM server's container as cAdvisor sees it:
// CPU used against its limit, CFS throttling, memory working set against
// its limit, OOM events, restarts (kube-state-metrics), network and
// filesystem I/O. Series are one per server and container, whatever the
// grouping (the query table allows instance only).
const QueryContainer QueryType = "container"

// ContainerOptions are the container type's own options.
type ContainerOptions struct {
	// Format is "series" (one series per server, container and signal) or
	// "table" (one row per server and container, the range's last values).
	Format string `json:"format"`
}

// Container label shapes (jsonData.containerLabels): how cAdvisor names a
// Kubernetes container. Kubelets since 1.16 write pod and container;
// older ones pod_name and container_name.
const (
	ContainerLabelsKubelet = "kubelet"
	ContainerLabelsLegacy  = "legacy"
)

// MaxContainerMap bounds jsonData.containerMap: a mapping is for fleets
// that no label joins (Docker, bare metal), which are small; a large
// fleet should relabel instead.
const MaxContainerMap = 500

// ContainerSettings say how cAdvisor's series join the vLLM servers.
type ContainerSettings struct {
	// PodLabel and ContainerLabel are cAdvisor's names of a Kubernetes
	// pod and container (jsonData.containerLabels).
	PodLabel, ContainerLabel string
	// Map ties containers to servers where no label joins them.
	Map []ContainerMapping
}

// ContainerMapping ties one cAdvisor container, by cgroup path (id) or
// by name, to the vLLM server whose instance label is Instance.
type ContainerMapping struct {
	Instance string `json:"instance"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Key is how cAdvisor names the mapped container: its id or its name.
func (m ContainerMapping) Key() (label, value string) {
	if m.ID != "" {
		return "id", m.ID
	}
	return "name", m.Name
}

type containerJSON struct {
	ContainerLabels string             `json:"containerLabels"`
	ContainerMap    []ContainerMapping `json:"containerMap"`
}

// DefaultContainerSettings are a kubelet's labels and no mapping.
func DefaultContainerSettings() ContainerSettings {
	return ContainerSettings{PodLabel: "pod", ContainerLabel: "container"}
}

// ParseContainerSettings reads jsonData.containerLabels and
// jsonData.containerMap; every error names its field and wraps
// ErrInvalidSettings.
func ParseContainerSettings(jsonData []byte) (ContainerSettings, error) {
	out := DefaultContainerSettings()
	var js containerJSON
	if len(jsonData) > 0 {
		if err := json.Unmarshal(jsonData, &js); err != nil {
			return out, fmt.Errorf("%w: containerLabels or containerMap has the wrong shape: %v "+
				`(containerMap is a list of {"instance": "...", "id": "/cgroup/path"} or {"instance": "...", "name": "container"})`, ErrInvalidSettings, err)
		}
	}
	switch js.ContainerLabels {
	case "", ContainerLabelsKubelet:
	case ContainerLabelsLegacy:
		out.PodLabel, out.ContainerLabel = "pod_name", "container_name"
	default:
		return out, fmt.Errorf("%w: containerLabels %q is not known; allowed: %s (pod, container; the default) or %s (pod_name, container_name: kubelets before 1.16)",
			ErrInvalidSettings, js.ContainerLabels, ContainerLabelsKubelet, ContainerLabelsLegacy)
	}
	var err error
	out.Map, err = validContainerMap(js.ContainerMap)
	return out, err
}

// validContainerMap checks each entry: an instance, and exactly one of a
// cgroup path (starting with /) or a name; no container mapped twice.
func validContainerMap(entries []ContainerMapping) ([]ContainerMapping, error) {
	if len(entries) > MaxContainerMap {
		return nil, fmt.Errorf("%w: containerMap has %d entries; at most %d (relabel a larger fleet so a label joins it)",
			ErrInvalidSettings, len(entries), MaxContainerMap)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		e.Instance, e.ID, e.Name = strings.TrimSpace(e.Instance), strings.TrimSpace(e.ID), strings.TrimSpace(e.Name)
		switch {
		case e.Instance == "":
			return nil, fmt.Errorf("%w: containerMap entry %d has no instance: name the vLLM server's instance label value, e.g. 10.0.0.7:8000", ErrInvalidSettings, i+1)
		case (e.ID == "") == (e.Name == ""):
			return nil, fmt.Errorf("%w: containerMap entry %d (instance %q) needs exactly one of id (a cgroup path such as /docker/<id> or /vllm/engine-0) or name (the container's name)", ErrInvalidSettings, i+1, e.Instance)
		case e.ID != "" && !strings.HasPrefix(e.ID, "/"):
			return nil, fmt.Errorf("%w: containerMap entry %d id %q is not a cgroup path: cAdvisor's id label starts with /", ErrInvalidSettings, i+1, e.ID)
		}
		label, value := e.Key()
		if seen[label+"="+value] {
			return nil, fmt.Errorf("%w: containerMap maps %s %q twice: a container belongs to one vLLM server", ErrInvalidSettings, label, value)
		}
		seen[label+"="+value] = true
		entries[i] = e
	}
	return entries, nil
}
