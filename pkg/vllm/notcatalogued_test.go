package vllm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryReferenceFamilyAccountedFor: every vllm: family of the reference
// table is catalogued or in NotCatalogued with a reason, never both, and
// NotCatalogued names nothing the table lacks.
func TestEveryReferenceFamilyAccountedFor(t *testing.T) {
	ref := loadReference(t)
	catalogued := map[string]bool{}
	for _, s := range Signals() {
		for _, n := range []string{s.V1, s.V1Old, s.V0} {
			catalogued[n] = n != ""
		}
	}
	for base, row := range ref {
		if !strings.HasPrefix(row.exposed, "vllm:") {
			continue
		}
		why, listed := NotCatalogued[base]
		require.True(t, catalogued[base] != listed, "vllm:%s: catalogued %v, listed as not catalogued %v", base, catalogued[base], listed)
		require.True(t, catalogued[base] || why != "", "vllm:%s has no reason", base)
	}
	for base := range NotCatalogued {
		require.Contains(t, ref, base, "NotCatalogued names vllm:%s, which the reference table lacks", base)
	}
}
