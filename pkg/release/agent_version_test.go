package release

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"2.34", "2.34", 0},
		{"2.3.2", "2.34", -1}, // 3 < 34, not a string comparison
		{"2.35", "2.34", 1},
		{"2.34", "2.4", 1},
		{"", "2.2.5", -1},
		{"3.0", "2.99", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			require.Equal(t, tt.want, compareVersions(tt.a, tt.b))
			require.Equal(t, -tt.want, compareVersions(tt.b, tt.a))
		})
	}
}
