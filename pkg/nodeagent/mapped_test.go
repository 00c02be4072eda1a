package nodeagent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/nodeagent/internal/fakeproc"
)

func proc(pid int, mem float64, inst, model string) agentapi.Process {
	return agentapi.Process{PID: pid, UsedMemoryBytes: agentapi.Float(mem), VLLMInstance: inst, Model: model}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name            string
		gpu             agentapi.GPU
		wantInst, model string
	}{
		{"no processes", agentapi.GPU{}, "", ""},
		{"unmapped only", agentapi.GPU{Processes: []agentapi.Process{proc(1, 10, "", "")}}, "", ""},
		{"most memory wins", agentapi.GPU{Processes: []agentapi.Process{proc(1, 10, "h:1", "a"), proc(2, 30, "h:2", "b"), proc(3, 15, "h:1", "a")}}, "h:2", "b"},
		{"sums per instance", agentapi.GPU{Processes: []agentapi.Process{proc(1, 20, "h:1", "a"), proc(2, 30, "h:2", "b"), proc(3, 15, "h:1", "a")}}, "h:1", "a"},
		{"tie goes to first name", agentapi.GPU{Processes: []agentapi.Process{proc(1, 5, "h:2", "b"), proc(2, 5, "h:1", "a")}}, "h:1", "a"},
		{"unknown memory still maps", agentapi.GPU{Processes: []agentapi.Process{{PID: 1, VLLMInstance: "h:9", Model: "z"}}}, "h:9", "z"},
		{"already set is kept", agentapi.GPU{VLLMInstance: "h:7", Model: "q", Processes: []agentapi.Process{proc(1, 5, "h:1", "a")}}, "h:7", "q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.gpu
			Summarize(&g)
			require.Equal(t, tt.wantInst, g.VLLMInstance)
			require.Equal(t, tt.model, g.Model)
		})
	}
}

func TestWithProcMapping(t *testing.T) {
	root := t.TempDir()
	fakeproc.Write(t, root, fakeproc.VLLMNode()...)
	src := SourceFunc(func(context.Context) ([]agentapi.GPU, error) {
		return []agentapi.GPU{
			{Index: 0, Processes: []agentapi.Process{proc(2101, 70e9, "", ""), proc(5000, 1e9, "", "")}},
			{Index: 1, Processes: []agentapi.Process{proc(6000, 1e9, "", ""), proc(99, 1, "sim:1", "pre")}},
			{Index: 2, Processes: []agentapi.Process{}},
		}, nil
	})
	gpus, err := WithProcMapping(src, ProcMapper{Root: root, Host: "n1"}).GPUs(context.Background())
	require.NoError(t, err)
	require.Equal(t, []agentapi.GPU{
		{Index: 0, VLLMInstance: "n1:8001", Model: "meta-llama/Llama-3.1-8B-Instruct", Processes: []agentapi.Process{
			proc(2101, 70e9, "n1:8001", "meta-llama/Llama-3.1-8B-Instruct"), proc(5000, 1e9, "", "")}},
		{Index: 1, VLLMInstance: "sim:1", Model: "pre", Processes: []agentapi.Process{proc(6000, 1e9, "", ""), proc(99, 1, "sim:1", "pre")}},
		{Index: 2, Processes: []agentapi.Process{}},
	}, gpus)
}
