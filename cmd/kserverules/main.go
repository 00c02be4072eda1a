// Command kserverules writes the KServe variants of the shipped rule
// files, their PrometheusRules and their unit tests (pkg/vllm
// KServeRules: every vllm: name read as kserve_vllm:, up selected by
// KServe's engine jobs), each into a kserve folder beside its source:
//
//	go run ./cmd/kserverules
//
// Run it from the repository root after changing a source (-root names
// another). pkg/deploytest's TestKServeRulesGenerated fails while a
// committed variant differs from what this writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "kserverules:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	for _, src := range vllm.KServeRuleSources {
		if err := write(root, src); err != nil {
			return err
		}
	}
	return nil
}

// write rewrites one source into its KServe target.
func write(root, src string) error {
	raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(src)))
	if err != nil {
		return fmt.Errorf("read source: %w", err)
	}
	out, err := vllm.KServeRules(src, raw)
	if err != nil {
		return err
	}
	target := filepath.Join(root, filepath.FromSlash(vllm.KServeTarget(src)))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("create the kserve folder: %w", err)
	}
	if err := os.WriteFile(target, out, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	return nil
}
