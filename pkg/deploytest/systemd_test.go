package deploytest

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nodeAgentUnit is the systemd unit of the node agent on bare metal.
const nodeAgentUnit = "deploy/systemd/vllm-node-agent.service"

// shippedExecPath is the binary the unit starts, where its install steps put it.
const shippedExecPath = "/usr/local/bin/vllm-node-agent"

// systemdAnalyze finds systemd-analyze or fails the test with what to do.
func systemdAnalyze(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SYSTEMD_ANALYZE_BIN"), "systemd-analyze", "/usr/bin/systemd-analyze"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatalf("systemd-analyze is not installed: run the README's test command (bash scripts/test.sh installs it " +
		"with `apt-get install -y systemd`) or set SYSTEMD_ANALYZE_BIN")
	return ""
}

// verifyUnit runs systemd-analyze verify on a copy of unit in a temporary
// folder. verify fails a unit whose ExecStart binary does not exist, and
// the agent is not installed here, so the copy starts a stand-in
// executable instead: only that path changes.
func verifyUnit(t *testing.T, unit string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	stand := filepath.Join(dir, "vllm-node-agent")
	require.NoError(t, os.WriteFile(stand, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	require.Equal(t, 1, strings.Count(unit, "ExecStart="+shippedExecPath), "the unit must start %s", shippedExecPath)
	return verifyAsIs(t, dir, strings.Replace(unit, "ExecStart="+shippedExecPath, "ExecStart="+stand, 1))
}

// verifyAsIs writes unit into dir under the shipped name, runs
// systemd-analyze verify on it and returns what it printed about the unit
// and whether it passed. verify exits 0 on unknown keys and invalid values
// (it warns and ignores them), so a warning about the unit fails it too;
// lines about other units (the host's own) are not the unit's fault and
// are left out.
func verifyAsIs(t *testing.T, dir, unit string) (string, bool) {
	t.Helper()
	name := filepath.Base(nodeAgentUnit)
	writeFile(t, filepath.Join(dir, name), unit)
	out, ok := runTool(t, dir, systemdAnalyze(t), "verify", "./"+name)
	var about []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, name) {
			about = append(about, line)
		}
	}
	return strings.Join(about, "\n"), ok && len(about) == 0
}

// TestSystemdUnitVerifies: systemd-analyze verify accepts the shipped unit
// without a warning, and refuses (or warns about) broken copies of it, so
// the check can fail.
func TestSystemdUnitVerifies(t *testing.T) {
	raw, err := os.ReadFile(repoPath(t, nodeAgentUnit))
	require.NoError(t, err)
	unit := string(raw)
	out, ok := verifyUnit(t, unit)
	require.True(t, ok, "systemd-analyze verify %s:\n%s", nodeAgentUnit, out)

	tests := []struct {
		name, old, new, want string
	}{
		{"misspelled key", "\nProtectClock=yes\n", "\nProtectClok=yes\n", "Unknown key"},
		{"invalid device rights", "\nDeviceAllow=char-nvidia* rw\n", "\nDeviceAllow=char-nvidia* rwx\n", "Invalid device rights"},
		{"invalid device policy", "\nDevicePolicy=closed\n", "\nDevicePolicy=shut\n", "Failed to parse device policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(unit, tt.old), "%q must occur once in %s", tt.old, nodeAgentUnit)
			out, ok := verifyUnit(t, strings.Replace(unit, tt.old, tt.new, 1))
			require.False(t, ok, "systemd-analyze verify accepted a broken unit (%s)", tt.name)
			require.Contains(t, out, tt.want)
		})
	}
	t.Run("binary missing", func(t *testing.T) {
		out, ok := verifyAsIs(t, t.TempDir(), strings.Replace(unit, shippedExecPath, "/nonexistent/vllm-node-agent", 1))
		require.False(t, ok, "systemd-analyze verify accepted a unit whose binary does not exist")
		require.Contains(t, out, "not executable")
	})
}

// unitSettings parses a unit file into section -> key -> values in file
// order, continuation lines (a trailing backslash) joined. An empty
// assignment (DeviceAllow=) resets the list, as systemd does.
func unitSettings(unit string) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	section := ""
	for _, line := range strings.Split(strings.ReplaceAll(unit, "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("%q is not KEY=VALUE inside a section", line)
			}
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if value == "" {
				out[section][key] = nil
				continue
			}
			out[section][key] = append(out[section][key], value)
		}
	}
	return out, nil
}

// nvidiaDevice is a device node the agent opens, with the device groups of
// /proc/devices it can belong to: the driver names major 195
// nvidia-frontend (proprietary modules) or nvidia (open modules), and a
// unit must allow both.
type nvidiaDevice struct {
	path   string
	groups []string
}

var nvidiaDevices = []nvidiaDevice{
	{"/dev/nvidiactl", []string{"nvidia-frontend", "nvidia"}},
	{"/dev/nvidia0", []string{"nvidia-frontend", "nvidia"}},
	{"/dev/nvidia7", []string{"nvidia-frontend", "nvidia"}}, // every GPU, not only the ones a list names
	{"/dev/nvidia-uvm", []string{"nvidia-uvm"}},
	{"/dev/nvidia-uvm-tools", []string{"nvidia-uvm"}},
	{"/dev/nvidia-caps/nvidia-cap1", []string{"nvidia-caps"}},
}

// allows reports whether one DeviceAllow= value grants read and write on
// a device in the given group: a path names that node only (systemd takes
// no wildcards in paths), char-<glob> matches group names by glob.
func allows(entry string, dev nvidiaDevice, group string) bool {
	spec, rights, _ := strings.Cut(entry, " ")
	rights = strings.TrimSpace(rights)
	if rights == "" {
		rights = "rwm" // systemd's default
	}
	if !strings.Contains(rights, "r") || !strings.Contains(rights, "w") {
		return false
	}
	if glob, ok := strings.CutPrefix(spec, "char-"); ok {
		m, err := path.Match(glob, group)
		return err == nil && m
	}
	return spec == dev.path
}

// isTrue is systemd's boolean parsing.
func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "y", "true", "t", "on":
		return true
	}
	return false
}

// deviceProblems lists the NVIDIA devices a unit closes. An allow-list is
// in force when the unit has a DeviceAllow=, a closed or strict
// DevicePolicy=, or ProtectClock=yes: on systemd 248-251 ProtectClock
// always implies DeviceAllow=char-rtc r, and any allow-list entry closes
// every device it does not name. PrivateDevices=yes hides them all.
func deviceProblems(unit string) ([]string, error) {
	s, err := unitSettings(unit)
	if err != nil {
		return nil, err
	}
	svc := s["Service"]
	last := func(key string) string {
		if v := svc[key]; len(v) > 0 {
			return v[len(v)-1]
		}
		return ""
	}
	if isTrue(last("PrivateDevices")) {
		return []string{"PrivateDevices=yes hides every /dev/nvidia* node"}, nil
	}
	policy := last("DevicePolicy")
	if policy == "strict" {
		return []string{"DevicePolicy=strict closes the pseudo devices (/dev/null, /dev/urandom)"}, nil
	}
	if !isTrue(last("ProtectClock")) && len(svc["DeviceAllow"]) == 0 && policy != "closed" {
		return nil, nil // no allow-list: every device is open
	}
	var problems []string
	for _, dev := range nvidiaDevices {
		for _, g := range dev.groups {
			if !allowedBy(svc["DeviceAllow"], dev, g) {
				problems = append(problems, fmt.Sprintf("%s (device group %s) is closed: no DeviceAllow= grants it rw", dev.path, g))
			}
		}
	}
	return problems, nil
}

func allowedBy(entries []string, dev nvidiaDevice, group string) bool {
	for _, e := range entries {
		if allows(e, dev, group) {
			return true
		}
	}
	return false
}

// TestSystemdUnitOpensGPUs: the shipped unit leaves every NVIDIA device
// open on every systemd version it supports, and the check fails on the
// ways a unit closes them (the first case is the unit before issue 36's
// fix: ProtectClock=yes alone).
func TestSystemdUnitOpensGPUs(t *testing.T) {
	raw, err := os.ReadFile(repoPath(t, nodeAgentUnit))
	require.NoError(t, err)
	problems, err := deviceProblems(string(raw))
	require.NoError(t, err)
	require.Empty(t, problems, "%s closes the GPUs on systemd 248-251", nodeAgentUnit)

	const head = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n"
	tests := []struct {
		name, service string
		want          string // part of a problem; "" for none
	}{
		{"ProtectClock alone (the old unit)", "ProtectClock=yes\n", "/dev/nvidiactl (device group nvidia-frontend) is closed"},
		{"ProtectClock=true alone", "ProtectClock=true\n", "/dev/nvidia0"},
		{"no allow-list at all", "ProtectHostname=yes\n", ""},
		{"ProtectClock with the groups", "ProtectClock=yes\nDeviceAllow=char-nvidia* rw\n", ""},
		{"explicit groups", "ProtectClock=yes\nDeviceAllow=char-nvidia-frontend rw\nDeviceAllow=char-nvidia rw\nDeviceAllow=char-nvidia-uvm rw\nDeviceAllow=char-nvidia-caps rw\n", ""},
		{"only the proprietary group: open modules closed", "ProtectClock=yes\nDeviceAllow=char-nvidia-frontend rw\nDeviceAllow=char-nvidia-uvm rw\nDeviceAllow=char-nvidia-caps rw\n", "/dev/nvidia0 (device group nvidia) is closed"},
		{"GPU paths: a GPU the list does not name", "ProtectClock=yes\nDeviceAllow=/dev/nvidiactl rw\nDeviceAllow=/dev/nvidia0 rw\n", "/dev/nvidia7"},
		{"uvm missing", "DeviceAllow=char-nvidia rw\nDeviceAllow=char-nvidia-frontend rw\nDeviceAllow=char-nvidia-caps rw\n", "/dev/nvidia-uvm-tools"},
		{"read-only", "ProtectClock=yes\nDeviceAllow=char-nvidia* r\n", "/dev/nvidiactl"},
		{"list reset by an empty assignment", "DeviceAllow=char-nvidia* rw\nDeviceAllow=\nProtectClock=yes\n", "/dev/nvidiactl"},
		{"closed policy without entries", "DevicePolicy=closed\n", "/dev/nvidia-caps/nvidia-cap1"},
		{"strict policy", "DevicePolicy=strict\nDeviceAllow=char-nvidia* rw\n", "strict"},
		{"PrivateDevices", "PrivateDevices=yes\n", "PrivateDevices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, err := deviceProblems(head + tt.service)
			require.NoError(t, err)
			if tt.want == "" {
				require.Empty(t, problems)
				return
			}
			require.NotEmpty(t, problems)
			require.Contains(t, strings.Join(problems, "\n"), tt.want)
		})
	}
}
