package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestRunWritesEveryVariant: run writes each source's KServeRules output
// to its target (folders created), and fails on a missing source.
func TestRunWritesEveryVariant(t *testing.T) {
	root := t.TempDir()
	for _, src := range vllm.KServeRuleSources {
		p := filepath.Join(root, filepath.FromSlash(src))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("groups:\n  - expr: vllm:x # "+src+"\n"), 0o644))
	}
	require.NoError(t, run(root))
	for _, src := range vllm.KServeRuleSources {
		want, err := vllm.KServeRules(src, []byte("groups:\n  - expr: vllm:x # "+src+"\n"))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(vllm.KServeTarget(src))))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
	require.NoError(t, os.Remove(filepath.Join(root, filepath.FromSlash(vllm.KServeRuleSources[0]))))
	require.ErrorIs(t, run(root), os.ErrNotExist)
}
