package nodeagent

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultVLLMPort is vLLM's API port when --port is not given.
const DefaultVLLMPort = 8000

// maxAncestors bounds the walk up the process tree.
const maxAncestors = 64

// ErrNotVLLM says a process is not part of a vLLM server.
var ErrNotVLLM = errors.New("not part of a vLLM API server")

// Owner is the vLLM API server a process belongs to.
type Owner struct {
	// Instance is "<host>:<port>", the instance label Prometheus gives the server.
	Instance string
	// Model is the served model name (--served-model-name, else the model).
	Model string
	// Port is the server's API port.
	Port int
	// ServerPID is the API server's process id.
	ServerPID int
}

// ProcMapper maps process ids to the vLLM API server that owns them by
// reading <Root>/<pid>/cmdline and <Root>/<pid>/stat. GPU memory is held by
// vLLM's engine-core and worker processes, whose command lines say nothing
// about the server (vLLM retitles them "VLLM::EngineCore" and the like), so
// the mapper walks up the parents until it meets the `vllm serve` or
// `python -m vllm.entrypoints.openai.api_server` process.
type ProcMapper struct {
	// Root is the proc file system, "/proc" on a real node.
	Root string
	// Host is the host part of the instance.
	Host string
}

// Owner finds the vLLM server that pid belongs to. It returns an error
// wrapping ErrNotVLLM when no ancestor is a vLLM server, or wrapping
// os.ErrNotExist when the process is gone (or in another pid namespace).
func (m ProcMapper) Owner(pid int) (Owner, error) {
	cur := pid
	for range maxAncestors {
		args, err := m.cmdline(cur)
		if err != nil {
			return Owner{}, err
		}
		if srv, ok := parseServer(args); ok {
			return m.owner(cur, srv)
		}
		ppid, err := m.parent(cur)
		if err != nil {
			return Owner{}, err
		}
		if ppid <= 0 || ppid == cur {
			break
		}
		cur = ppid
	}
	return Owner{}, fmt.Errorf("pid %d: %w", pid, ErrNotVLLM)
}

func (m ProcMapper) owner(pid int, srv server) (Owner, error) {
	port := DefaultVLLMPort
	if srv.port != "" {
		p, err := strconv.Atoi(srv.port)
		if err != nil || p < 1 || p > 65535 {
			return Owner{}, fmt.Errorf("pid %d: vLLM server with invalid --port %q: %w", pid, srv.port, ErrNotVLLM)
		}
		port = p
	}
	model := srv.model
	if srv.served != "" {
		model = srv.served
	}
	return Owner{Instance: net.JoinHostPort(m.Host, strconv.Itoa(port)), Model: model, Port: port, ServerPID: pid}, nil
}

func (m ProcMapper) root() string {
	if m.Root == "" {
		return "/proc"
	}
	return m.Root
}

// cmdline reads a process's arguments (NUL separated).
func (m ProcMapper) cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(m.root(), strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, fmt.Errorf("pid %d: reading cmdline: %w", pid, err)
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil, nil // kernel thread or zombie
	}
	return strings.Split(string(b), "\x00"), nil
}

// parent reads the parent pid from <pid>/stat: the fourth field, counted
// after the command name, which is in parentheses and may hold spaces or
// parentheses itself.
func (m ProcMapper) parent(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join(m.root(), strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("pid %d: reading stat: %w", pid, err)
	}
	return parseStatPPID(string(b))
}

func parseStatPPID(stat string) (int, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("stat: no command name")
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 2 {
		return 0, errors.New("stat: too few fields")
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, fmt.Errorf("stat: parent pid %q: %w", fields[1], err)
	}
	return ppid, nil
}

// server is what a vLLM API server's command line says.
type server struct {
	model, served, port string
}

// parseServer recognises `vllm serve [MODEL] ...` (the vllm script, maybe run
// by python, or `-m vllm.entrypoints.cli.main serve`) and
// `-m vllm.entrypoints.openai.api_server ...`, and reads its flags.
func parseServer(args []string) (server, bool) {
	for i, a := range args {
		switch {
		case i+1 < len(args) && args[i+1] == "serve" && (path.Base(a) == "vllm" || (a == "vllm.entrypoints.cli.main" && i > 0 && args[i-1] == "-m")):
			return parseServeArgs(args[i+2:]), true
		case a == "vllm.entrypoints.openai.api_server" && i > 0 && args[i-1] == "-m":
			return parseFlags(args[i+1:]), true
		}
	}
	return server{}, false
}

// parseServeArgs takes the optional positional model right after "serve".
func parseServeArgs(args []string) server {
	var model string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		model, args = args[0], args[1:]
	}
	s := parseFlags(args)
	if s.model == "" {
		s.model = model
	}
	return s
}

// parseFlags reads --model, --served-model-name (its first name) and
// --port, as "--flag value" or "--flag=value", with dashes or underscores.
func parseFlags(args []string) server {
	var s server
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		if !strings.HasPrefix(name, "--") {
			continue
		}
		name = strings.ReplaceAll(name, "_", "-")
		if !inline {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				continue
			}
			value = args[i+1]
		}
		switch name {
		case "--model":
			s.model = value
		case "--served-model-name":
			s.served = value
		case "--port":
			s.port = value
		}
	}
	return s
}
