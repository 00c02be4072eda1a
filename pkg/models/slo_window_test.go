package models

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSLOWindowBounds pins both ends of the compliance window: 1h and
// 366d are allowed, however written; anything shorter or longer is not.
func TestSLOWindowBounds(t *testing.T) {
	tests := []struct {
		window string
		want   time.Duration // 0: rejected
	}{
		{window: "1h", want: time.Hour},
		{window: "60m", want: time.Hour},
		{window: "59m59s", want: 0},
		{window: "366d", want: 366 * 24 * time.Hour},
		{window: "8784h", want: 366 * 24 * time.Hour},
		{window: "52w2d", want: 366 * 24 * time.Hour},
		{window: "366d1s", want: 0},
		{window: "8785h", want: 0},
		{window: "367d", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.window, func(t *testing.T) {
			q, err := parseJSON(`{"queryType":"slo","window":"` + tt.window + `"}`)
			if tt.want == 0 {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, "window "+tt.window+" is out of range; allowed: 1h to 366d")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, q.Options.(SLOOptions).WindowDuration)
		})
	}
}
