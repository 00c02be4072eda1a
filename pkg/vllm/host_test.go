package vllm

import (
	"regexp"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

func TestHostSignals(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "eu")}}
	sigs := b.HostSignals(models.Filters{Instances: []string{`10.0.0.1:8000`, `a"b`}}, "1m")
	require.Len(t, sigs, 5)
	for _, s := range sigs {
		_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
		require.NoError(t, err, "%s: %s", s.Name, s.Expr)
		require.Contains(t, s.Expr, `group_left () (`, "joined to the vLLM instances by host")
		require.Contains(t, s.Expr, `node_`, s.Name)
		require.Contains(t, s.Expr, `cluster="eu"`, "the node series stay inside the data source's scope")
		require.Contains(t, s.Expr, `instance=~"10\\.0\\.0\\.1:8000|a\"b"`)
	}
	_, err := parser.NewParser(parser.Options{}).ParseExpr(b.NodeProbe())
	require.NoError(t, err)
}

// TestHostRegex: the host of host:port, of [v6]:port and of a label
// without a port, as label_replace (fully anchored) reads it.
func TestHostRegex(t *testing.T) {
	m := labels.MustNewMatcher(labels.MatchRegexp, "x", hostRegex)
	require.True(t, m.Matches("10.0.0.1:9100"))
	re := m.GetRegexString()
	require.Equal(t, hostRegex, re)
	for in, want := range map[string]string{"10.0.0.1:8000": "10.0.0.1", "[::1]:9100": "[::1]", "gpu-node-3": "gpu-node-3", "node:x": "node:x"} {
		got := hostOf(in)
		require.Equal(t, want, got, in)
	}
}

var hostRE = regexp.MustCompile("^(?:" + hostRegex + ")$")

// hostOf is what label_replace's hostRegex makes of an instance label.
func hostOf(instance string) string {
	m := hostRE.FindStringSubmatch(instance)
	if m == nil {
		return ""
	}
	return m[1]
}
