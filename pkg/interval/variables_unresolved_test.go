package interval

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHasUnresolvedVariableAfterEarlyBrace: the closing brace remembered
// for one '$' is looked up again for a later '$' once it lies behind it,
// wherever it was, so a ${name} after a '}' at the very start (index 1,
// "$}") is still reported.
func TestHasUnresolvedVariableAfterEarlyBrace(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`$}${model}`, "${model}"},
		{`$}} ${model:regex}`, "${model:regex}"},
		{`$a}${model}`, "$a"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, ok := HasUnresolvedVariable(tt.expr)
			require.True(t, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
