package interval

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// PromDuration writes one PromQL unit: seconds when whole, else
// milliseconds, truncated below a millisecond, never "1m".
func TestPromDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "0s",
		90 * time.Second:                   "90s",
		time.Hour:                          "3600s",
		250 * time.Millisecond:             "250ms",
		1500 * time.Millisecond:            "1500ms",
		1500 * time.Microsecond:            "1ms",
		-2 * time.Second:                   "-2s",
		time.Second + time.Nanosecond:      "1000ms",
		time.Minute + 500*time.Millisecond: "60500ms",
		time.Duration(1<<63 - 1):           "9223372036854ms",
	} {
		require.Equal(t, want, PromDuration(d), "%d", d)
	}
}

// Compact is time.Duration.String without the zero tails, and
// time.ParseDuration reads it back.
func TestCompact(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "0s",
		3 * time.Minute:                    "3m",
		90 * time.Second:                   "1m30s",
		time.Hour:                          "1h",
		90 * time.Minute:                   "1h30m",
		time.Hour + 30*time.Second:         "1h0m30s",
		36 * time.Hour:                     "36h",
		1500 * time.Millisecond:            "1.5s",
		-10 * time.Minute:                  "-10m",
		time.Minute + 500*time.Millisecond: "1m0.5s",
	} {
		require.Equal(t, want, Compact(d), "%d", d)
		back, err := time.ParseDuration(Compact(d))
		require.NoError(t, err)
		require.Equal(t, d, back)
	}
}
