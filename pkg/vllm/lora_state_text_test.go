package vllm

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loraState reads the gauge's value as the Unix time of the last update,
// fractional seconds included.
func TestLoRAStateUpdatedKeepsFraction(t *testing.T) {
	s := loraState(time.UnixMilli(0), 1700000000.5, map[string]string{LoRAMaxLabel: "4"})
	require.Equal(t, time.Unix(1700000000, 500_000_000).UTC(), s.Updated)
	require.Equal(t, 4, s.MaxLoRAs)
}

// loraShortList names all n when there are exactly n, and says how many
// more past n.
func TestLoRAShortListAtItsLength(t *testing.T) {
	names := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprintf("s%d", i)
		}
		return out
	}
	require.Equal(t, "s0, s1, s2", loraShortList(names(3), 3))
	require.Equal(t, "s0, s1 and 1 more", loraShortList(names(3), 2))
	require.NotContains(t, LoRADisabledText(names(10), false), "more")
	require.Contains(t, LoRADisabledText(names(11), false), "s9 and 1 more")
}
