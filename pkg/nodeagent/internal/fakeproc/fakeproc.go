// Package fakeproc writes fake /proc trees for tests of the process mapping.
package fakeproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Proc is one fake process.
type Proc struct {
	PID, PPID int
	// Comm is the name in stat's parentheses; it defaults to the base of Args[0].
	Comm string
	// Args are written NUL-separated, as the kernel does.
	Args []string
	// Retitled writes Args[0] padded with NULs, as setproctitle leaves it.
	Retitled bool
}

// Write creates root/<pid>/cmdline and root/<pid>/stat for each process.
func Write(t testing.TB, root string, procs ...Proc) {
	t.Helper()
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.PID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "cmdline"), cmdline(p))
		write(t, filepath.Join(dir, "stat"), stat(p))
	}
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cmdline(p Proc) string {
	if len(p.Args) == 0 {
		return ""
	}
	if p.Retitled {
		return p.Args[0] + strings.Repeat("\x00", 40)
	}
	return strings.Join(p.Args, "\x00") + "\x00"
}

func stat(p Proc) string {
	comm := p.Comm
	if comm == "" && len(p.Args) > 0 {
		comm = filepath.Base(p.Args[0])
	}
	if len(comm) > 15 {
		comm = comm[:15]
	}
	return fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 1000 0 0 0 12 3 0 0 20 0 8 0 100 1000000 500 18446744073709551615\n", p.PID, comm, p.PPID, p.PID, p.PID)
}

// Engine and worker titles vLLM gives its child processes.
const (
	EngineCoreTitle = "VLLM::EngineCore"
	SpawnCmd        = "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)"
)

// VLLMNode is a node with three vLLM servers and one other GPU user:
//
//   - pid 2000 `vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8001 -tp 2`
//     (run as `python3 /usr/local/bin/vllm`), its engine core 2100 and
//     tensor-parallel workers 2101 and 2102 (retitled);
//   - pid 3000 `python3 -m vllm.entrypoints.openai.api_server --model
//     /models/qwen --served-model-name Qwen/Qwen2.5-7B-Instruct --port=8002`
//     and its engine core 3100 (a multiprocessing spawn command line);
//   - pid 4000 `vllm serve Qwen/Qwen3-0.6B` (default port 8000) and its
//     engine core 4100, whose comm holds a space and parentheses;
//   - pid 5000 `python3 train.py`, not vLLM.
func VLLMNode() []Proc {
	return []Proc{
		{PID: 1, PPID: 0, Args: []string{"/sbin/init"}},
		{PID: 2000, PPID: 1, Args: []string{"/usr/bin/python3", "/usr/local/bin/vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--port", "8001", "--tensor-parallel-size", "2"}},
		{PID: 2100, PPID: 2000, Comm: "VLLM::EngineCor", Args: []string{EngineCoreTitle}, Retitled: true},
		{PID: 2101, PPID: 2100, Comm: "VLLM::Worker_TP", Args: []string{"VLLM::Worker_TP0"}, Retitled: true},
		{PID: 2102, PPID: 2100, Comm: "VLLM::Worker_TP", Args: []string{"VLLM::Worker_TP1"}, Retitled: true},
		{PID: 3000, PPID: 1, Args: []string{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/qwen", "--served-model-name", "Qwen/Qwen2.5-7B-Instruct", "--port=8002"}},
		{PID: 3100, PPID: 3000, Args: []string{"/usr/bin/python3", "-c", SpawnCmd, "--multiprocessing-fork"}},
		{PID: 4000, PPID: 1, Args: []string{"vllm", "serve", "Qwen/Qwen3-0.6B", "--gpu-memory-utilization", "0.9"}},
		{PID: 4100, PPID: 4000, Comm: "a (b) c", Args: []string{"VLLM::EngineCore_DP0"}, Retitled: true},
		{PID: 5000, PPID: 1, Args: []string{"python3", "train.py"}},
	}
}
