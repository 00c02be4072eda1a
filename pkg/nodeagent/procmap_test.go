package nodeagent

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/nodeagent/internal/fakeproc"
)

func TestParseServer(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want server
		ok   bool
	}{
		{"vllm serve positional", []string{"vllm", "serve", "m/a", "--port", "9000"}, server{model: "m/a", port: "9000"}, true},
		{"vllm script run by python", []string{"/usr/bin/python3", "/usr/local/bin/vllm", "serve", "m/a"}, server{model: "m/a"}, true},
		{"cli main module", []string{"python", "-m", "vllm.entrypoints.cli.main", "serve", "m/a", "--port=1"}, server{model: "m/a", port: "1"}, true},
		{"served name wins later", []string{"vllm", "serve", "m/a", "--served-model-name", "alias", "other"}, server{model: "m/a", served: "alias"}, true},
		{"underscored flags", []string{"vllm", "serve", "--model=m/b", "--served_model_name=x", "--port", "8080"}, server{model: "m/b", served: "x", port: "8080"}, true},
		{"flags before positional are not the model", []string{"vllm", "serve", "--enforce-eager", "m/c"}, server{}, true},
		{"openai api_server module", []string{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m/d", "--port", "8002"}, server{model: "m/d", port: "8002"}, true},
		{"flag without value is skipped", []string{"vllm", "serve", "m/e", "--port", "--enforce-eager"}, server{model: "m/e"}, true},
		{"vllm other subcommand", []string{"vllm", "bench", "serve"}, server{}, false},
		{"retitled engine core", []string{"VLLM::EngineCore"}, server{}, false},
		{"module name without -m", []string{"python", "vllm.entrypoints.openai.api_server"}, server{}, false},
		{"not vllm", []string{"python3", "train.py", "--port", "8000"}, server{}, false},
		{"empty", nil, server{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseServer(tt.args)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseStatPPID(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int
		wantErr    string
	}{
		{"plain", "42 (python3) S 7 42 42 0", 7, ""},
		{"comm with spaces and parens", "42 (a (b) c) R 9 1 1", 9, ""},
		{"no parens", "42 python3 S 7", 0, "no command name"},
		{"truncated", "42 (x) S", 0, "too few fields"},
		{"bad ppid", "42 (x) S y", 0, `parent pid "y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatPPID(tt.stat)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestProcMapperOwner(t *testing.T) {
	root := t.TempDir()
	fakeproc.Write(t, root, fakeproc.VLLMNode()...)
	fakeproc.Write(t, root,
		fakeproc.Proc{PID: 7000, PPID: 1, Args: []string{"vllm", "serve", "m", "--port", "99999"}},
		fakeproc.Proc{PID: 7001, PPID: 7000, Args: []string{"VLLM::EngineCore"}, Retitled: true},
		fakeproc.Proc{PID: 7100, PPID: 7100, Args: []string{"loop"}},
		fakeproc.Proc{PID: 7200, PPID: 1},
	)
	m := ProcMapper{Root: root, Host: "gpu-node-1"}
	tests := []struct {
		name    string
		pid     int
		want    Owner
		wantErr error
	}{
		{"tp worker two levels down", 2101, Owner{Instance: "gpu-node-1:8001", Model: "meta-llama/Llama-3.1-8B-Instruct", Port: 8001, ServerPID: 2000}, nil},
		{"second tp worker", 2102, Owner{Instance: "gpu-node-1:8001", Model: "meta-llama/Llama-3.1-8B-Instruct", Port: 8001, ServerPID: 2000}, nil},
		{"engine core", 2100, Owner{Instance: "gpu-node-1:8001", Model: "meta-llama/Llama-3.1-8B-Instruct", Port: 8001, ServerPID: 2000}, nil},
		{"spawned child, served name wins", 3100, Owner{Instance: "gpu-node-1:8002", Model: "Qwen/Qwen2.5-7B-Instruct", Port: 8002, ServerPID: 3000}, nil},
		{"default port, odd comm", 4100, Owner{Instance: "gpu-node-1:8000", Model: "Qwen/Qwen3-0.6B", Port: 8000, ServerPID: 4000}, nil},
		{"the server itself", 4000, Owner{Instance: "gpu-node-1:8000", Model: "Qwen/Qwen3-0.6B", Port: 8000, ServerPID: 4000}, nil},
		{"not vllm", 5000, Owner{}, ErrNotVLLM},
		{"bad port", 7001, Owner{}, ErrNotVLLM},
		{"own parent", 7100, Owner{}, ErrNotVLLM},
		{"kernel thread", 7200, Owner{}, ErrNotVLLM},
		{"gone", 6000, Owner{}, os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Owner(tt.pid)
			if tt.wantErr != nil {
				require.True(t, errors.Is(err, tt.wantErr), "error %v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestProcMapperIPv6Host(t *testing.T) {
	root := t.TempDir()
	fakeproc.Write(t, root, fakeproc.Proc{PID: 10, PPID: 1, Args: []string{"vllm", "serve", "m"}})
	o, err := ProcMapper{Root: root, Host: "fd00::1"}.Owner(10)
	require.NoError(t, err)
	require.Equal(t, "[fd00::1]:8000", o.Instance)
}
