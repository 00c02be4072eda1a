package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseContainerSettings(t *testing.T) {
	tests := []struct {
		name, json string
		want       ContainerSettings
		err        string
	}{
		{name: "default", json: `{}`, want: DefaultContainerSettings()},
		{name: "kubelet", json: `{"containerLabels":"kubelet"}`, want: DefaultContainerSettings()},
		{name: "legacy", json: `{"containerLabels":"legacy"}`, want: ContainerSettings{PodLabel: "pod_name", ContainerLabel: "container_name"}},
		{name: "unknown labels", json: `{"containerLabels":"docker"}`, err: `containerLabels "docker" is not known; allowed: kubelet`},
		{name: "map", json: `{"containerMap":[{"instance":" h:8000 ","id":"/vllm/a"},{"instance":"h:8001","name":"vllm-1"}]}`,
			want: ContainerSettings{PodLabel: "pod", ContainerLabel: "container", Map: []ContainerMapping{{Instance: "h:8000", ID: "/vllm/a"}, {Instance: "h:8001", Name: "vllm-1"}}}},
		{name: "no instance", json: `{"containerMap":[{"id":"/vllm/a"}]}`, err: "containerMap entry 1 has no instance"},
		{name: "both id and name", json: `{"containerMap":[{"instance":"h","id":"/a","name":"a"}]}`, err: "needs exactly one of id"},
		{name: "neither", json: `{"containerMap":[{"instance":"h"}]}`, err: "needs exactly one of id"},
		{name: "id not a path", json: `{"containerMap":[{"instance":"h","id":"abc"}]}`, err: `id "abc" is not a cgroup path`},
		{name: "twice", json: `{"containerMap":[{"instance":"h","id":"/a"},{"instance":"g","id":"/a"}]}`, err: `maps id "/a" twice`},
		{name: "wrong shape", json: `{"containerMap":{"instance":"h"}}`, err: "containerMap is a list of"},
		// Entries are counted from 1 in the errors, whichever check fails.
		{name: "second entry both", json: `{"containerMap":[{"instance":"h","id":"/a"},{"instance":"g","id":"/b","name":"b"}]}`,
			err: `containerMap entry 2 (instance "g") needs exactly one of id`},
		{name: "second entry not a path", json: `{"containerMap":[{"instance":"h","id":"/a"},{"instance":"g","id":"b"}]}`,
			err: `containerMap entry 2 id "b" is not a cgroup path`},
		{name: "too many", json: containerMapJSON(MaxContainerMap + 1), err: "containerMap has 501 entries; at most 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseContainerSettings([]byte(tt.json))
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	s, err := ParseSettings(Instance{URL: "http://p:9090", JSONData: []byte(`{"containerLabels":"x"}`)})
	require.Error(t, err, "the data source refuses it: %+v", s)
}

// containerMapJSON is a containerMap setting of n valid entries.
func containerMapJSON(n int) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf(`{"instance":"h:%d","id":"/vllm/%d"}`, i, i)
	}
	return `{"containerMap":[` + strings.Join(entries, ",") + `]}`
}

// TestContainerMapAtItsLimit: exactly MaxContainerMap entries are allowed.
func TestContainerMapAtItsLimit(t *testing.T) {
	got, err := ParseContainerSettings([]byte(containerMapJSON(MaxContainerMap)))
	require.NoError(t, err)
	require.Len(t, got.Map, MaxContainerMap)
}
