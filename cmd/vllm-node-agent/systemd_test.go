package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/nodeagent"
)

const (
	unitFile = "../../deploy/systemd/vllm-node-agent.service"
	envFile  = "../../deploy/systemd/vllm-node-agent.env"
)

// systemdUnit is a unit file: section -> key -> values in file order, with
// continuation lines (a trailing backslash) joined.
type systemdUnit map[string]map[string][]string

func readUnit(t *testing.T, path string) systemdUnit {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	unit := systemdUnit{}
	section := ""
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			unit[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			require.True(t, ok, "%s: %q is not KEY=VALUE", path, line)
			require.NotEmpty(t, section, "%s: %q is outside a section", path, line)
			unit[section][key] = append(unit[section][key], strings.TrimSpace(value))
		}
	}
	return unit
}

// one returns the single value of a key, failing when it is absent or repeated.
func (u systemdUnit) one(t *testing.T, section, key string) string {
	t.Helper()
	values := u[section][key]
	require.Len(t, values, 1, "[%s] %s", section, key)
	return values[0]
}

// readEnvFile reads an EnvironmentFile= file: KEY=VALUE lines and comments.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	env := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not KEY=VALUE", path, line)
		env[key] = value
	}
	return env
}

var (
	unitVarRe       = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	unitSpecifierRe = regexp.MustCompile(`%.`)
)

// execArgs expands ExecStart= the way systemd does for this unit: ${VAR}
// from the environment file (an unset one is an error here, since it would
// pass an empty flag), %d as the credentials folder; then splits on spaces.
func execArgs(execStart string, env map[string]string, credentials string) ([]string, error) {
	var missing []string
	s := unitVarRe.ReplaceAllStringFunc(execStart, func(m string) string {
		name := unitVarRe.FindStringSubmatch(m)[1]
		v, ok := env[name]
		if !ok || v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("ExecStart uses %v, which the environment file does not set", missing)
	}
	var unknown []string
	s = unitSpecifierRe.ReplaceAllStringFunc(s, func(m string) string {
		if m == "%d" {
			return credentials
		}
		unknown = append(unknown, m)
		return m
	})
	if len(unknown) > 0 {
		return nil, fmt.Errorf("ExecStart uses specifiers %v this test does not know", unknown)
	}
	return strings.Fields(strings.TrimLeft(s, "-@:+!")), nil
}

// TestSystemdUnitRunsAgent: the unit's ExecStart, with the example
// environment file, is a command line the agent's own flag parsing accepts;
// it listens beyond loopback, so it must read the token from the
// credential the unit loads.
func TestSystemdUnitRunsAgent(t *testing.T) {
	unit := readUnit(t, unitFile)
	env := readEnvFile(t, envFile)
	require.Equal(t, "/etc/vllm-node-agent/vllm-node-agent.env", unit.one(t, "Service", "EnvironmentFile"))

	credentials := t.TempDir()
	cred, src, ok := strings.Cut(unit.one(t, "Service", "LoadCredential"), ":")
	require.True(t, ok, "LoadCredential= is NAME:PATH")
	require.True(t, filepath.IsAbs(src), "the token file %s must be an absolute path", src)
	require.NoError(t, os.WriteFile(filepath.Join(credentials, cred), []byte("s3cret\n"), 0o600))

	args, err := execArgs(unit.one(t, "Service", "ExecStart"), env, credentials)
	require.NoError(t, err)
	require.Equal(t, "/usr/local/bin/vllm-node-agent", args[0])
	o, err := parseFlags(args[1:], &strings.Builder{})
	require.NoError(t, err, "the agent rejects the unit's flags %q", args[1:])

	require.Equal(t, env["VLLM_NODE_AGENT_LISTEN"], o.listen)
	require.Equal(t, env["VLLM_NODE_AGENT_INSTANCE_HOST"], o.instanceHost)
	require.Equal(t, env["VLLM_NODE_AGENT_NODE_NAME"], o.node)
	require.NotEqual(t, nodeagent.DefaultListen, o.listen, "the default (loopback) is not reachable by Grafana or Prometheus")
	host, _, err := net.SplitHostPort(o.listen)
	require.NoError(t, err)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		token, err := nodeagent.LoadToken(o.tokenFile, "")
		require.NoError(t, err, "the unit must hand the agent the token it loads as a credential")
		require.Equal(t, "s3cret", token)
	}
	require.Zero(t, o.simulate, "a bare-metal unit reads NVML, not simulated GPUs")
}

// TestSystemdUnitFlagDrift: the check above fails when the unit names a flag
// the agent does not have (a renamed flag) or a variable the environment
// file does not set.
func TestSystemdUnitFlagDrift(t *testing.T) {
	unit := readUnit(t, unitFile)
	env := readEnvFile(t, envFile)
	execStart := unit.one(t, "Service", "ExecStart")
	require.Contains(t, execStart, "--instance-host=")

	args, err := execArgs(strings.Replace(execStart, "--instance-host=", "--instance-hostname=", 1), env, t.TempDir())
	require.NoError(t, err)
	_, err = parseFlags(args[1:], &strings.Builder{})
	require.ErrorContains(t, err, "flag provided but not defined: -instance-hostname")

	delete(env, "VLLM_NODE_AGENT_INSTANCE_HOST")
	_, err = execArgs(execStart, env, t.TempDir())
	require.ErrorContains(t, err, "VLLM_NODE_AGENT_INSTANCE_HOST")
}

// TestSystemdUnitHardening: the unit drops privileges, and sets none of the
// options that would hide the GPUs (/dev/nvidia*) or other processes' /proc
// entries, which the agent needs to map GPU processes to vLLM servers.
func TestSystemdUnitHardening(t *testing.T) {
	svc := readUnit(t, unitFile)["Service"]
	for key, want := range map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"CapabilityBoundingSet": "", "PrivateTmp": "yes", "RestrictSUIDSGID": "yes",
	} {
		require.Equal(t, []string{want}, svc[key], "[Service] %s", key)
	}
	for key, bad := range map[string]string{"PrivateDevices": "yes", "ProtectProc": "invisible", "ProcSubset": "pid"} {
		require.NotContains(t, svc[key], bad, "[Service] %s=%s would hide what the agent reads", key, bad)
	}
	require.Empty(t, svc["User"], "the unit runs as a dynamic user, not a fixed one")
}
