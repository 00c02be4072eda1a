package nodeagent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/nodeagent/internal/fakeproc"
)

// TestProcMapperServerIsPID1: in a container the vLLM server is often PID 1
// (its parent is PID 0), so the walk up from a worker must reach PID 1 and
// recognise it.
func TestProcMapperServerIsPID1(t *testing.T) {
	root := t.TempDir()
	fakeproc.Write(t, root,
		fakeproc.Proc{PID: 1, PPID: 0, Args: []string{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--port", "8000"}},
		fakeproc.Proc{PID: 42, PPID: 1, Args: []string{"VLLM::EngineCore"}, Retitled: true},
		fakeproc.Proc{PID: 77, PPID: 42, Args: []string{"VLLM::Worker_TP0"}, Retitled: true},
	)
	m := ProcMapper{Root: root, Host: "pod-1"}
	want := Owner{Instance: "pod-1:8000", Model: "m", Port: 8000, ServerPID: 1}
	for _, pid := range []int{1, 42, 77} {
		got, err := m.Owner(pid)
		require.NoError(t, err, "pid %d", pid)
		require.Equal(t, want, got, "pid %d", pid)
	}
}
