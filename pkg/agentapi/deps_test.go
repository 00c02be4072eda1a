package agentapi_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPluginSideStaysCgoFree guards the plugin binary (built with
// CGO_ENABLED=0): the packages it uses for node agents must not pull in
// go-nvml or the agent's own packages.
func TestPluginSideStaysCgoFree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "go test runs with the go command on PATH")
	cmd := exec.Command(goBin, "list", "-deps",
		"github.com/inferops/vllm-datasource/pkg", // the plugin binary itself
		"github.com/inferops/vllm-datasource/pkg/agentapi",
		"github.com/inferops/vllm-datasource/pkg/frames",
		"github.com/inferops/vllm-datasource/pkg/models")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		require.NotContains(t, dep, "go-nvml")
		require.NotContains(t, dep, "vllm-datasource/pkg/nodeagent")
	}
}
