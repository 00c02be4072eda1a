package interval

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tables pin Round, Format and Parse to Grafana's answers without
// the SDK; pkg/internal/gtimeparity compares them with gtime itself over
// many more inputs.

func TestRound(t *testing.T) {
	const ms, s, m, h = time.Millisecond, time.Second, time.Minute, time.Hour
	tests := []struct {
		in, want time.Duration
	}{
		{-time.Hour, ms}, {0, ms}, {1, ms}, {10 * ms, ms},
		{10*ms + 1, 10 * ms}, {15 * ms, 10 * ms}, {35 * ms, 20 * ms}, {75 * ms, 50 * ms},
		{150 * ms, 100 * ms}, {350 * ms, 200 * ms}, {750 * ms, 500 * ms}, {1500 * ms, s},
		{1500*ms + 1, 2 * s}, {3500 * ms, 2 * s}, {7500 * ms, 5 * s}, {12500 * ms, 10 * s},
		{17500 * ms, 15 * s}, {25 * s, 20 * s}, {36 * s, 30 * s}, {45 * s, 30 * s},
		{90 * s, m}, {210 * s, 2 * m}, {450 * s, 5 * m}, {750 * s, 10 * m},
		{1050 * s, 15 * m}, {25 * m, 20 * m}, {45 * m, 30 * m}, {90 * m, h},
		{150 * m, 2 * h}, {270 * m, 3 * h}, {9 * h, 6 * h}, {day, 12 * h},
		{2 * day, day}, {week, day}, {week + 1, week}, {3 * week, week},
		{3*week + 1, 30 * day}, {2*year - 1, 30 * day}, {2 * year, year}, {maxDuration, year},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			require.Equal(t, tt.want, Round(tt.in))
		})
	}
}

func TestRoundBucketsIncrease(t *testing.T) {
	for i := 1; i < len(roundBuckets); i++ {
		require.Greater(t, roundBuckets[i].upTo, roundBuckets[i-1].upTo, "row %d", i)
		require.GreaterOrEqual(t, roundBuckets[i].to, roundBuckets[i-1].to, "row %d", i)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{-time.Second, "1ms"}, {0, "1ms"}, {time.Millisecond - 1, "1ms"},
		{time.Millisecond, "1ms"}, {999 * time.Millisecond, "999ms"}, {time.Second, "1s"},
		{90 * time.Second, "1m"}, {2 * time.Minute, "2m"}, {119 * time.Minute, "1h"},
		{day - 1, "23h"}, {day, "1d"}, {30 * day, "30d"}, {year - 1, "364d"},
		{year, "1y"}, {julianYear * 3, "3y"}, {maxDuration, "292y"},
	}
	for _, tt := range tests {
		t.Run(tt.in.String(), func(t *testing.T) {
			require.Equal(t, tt.want, Format(tt.in))
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "90", want: 90 * time.Second},
		{in: "<90>", want: 90 * time.Second},
		{in: "<2m>", want: 2 * time.Minute},
		{in: "2m>", want: 2 * time.Minute},
		{in: "<2m", want: 2 * time.Minute},
		{in: "1m30s", want: 90 * time.Second},
		{in: "1.5h", want: 90 * time.Minute},
		{in: "250ms", want: 250 * time.Millisecond},
		{in: "-5m", want: -5 * time.Minute},
		{in: "2d", want: 2 * day},
		{in: "1w", want: week},
		{in: "1M", want: 30*day + 10*time.Hour + 30*time.Minute},
		{in: "1y", want: 365*day + 6*time.Hour},
		{in: "0y"},
		{in: "007d", want: week},
		{in: "1.5d", wantErr: `time: unknown unit "d" in duration "1.5d"`},
		{in: "-1d", wantErr: `time: unknown unit "d" in duration "-1d"`},
		{in: "d", wantErr: `strconv.Atoi: parsing "": invalid syntax`},
		{in: "99999999999999999999d", wantErr: `strconv.Atoi: parsing "99999999999999999999": value out of range`},
		{in: "99999999999999999999", wantErr: `strconv.ParseInt: parsing "99999999999999999999": value out of range`},
		{in: "<>", wantErr: `strconv.ParseInt: parsing "": invalid syntax`},
		{in: "", wantErr: "invalid interval"},
		{in: "five minutes", wantErr: `time: invalid duration "five minutes"`},
		{in: "<<2m>>", wantErr: `time: invalid duration "<2m>"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestParseWraps: like Grafana, Parse does not check the calendar units
// for overflow; Compute is safe because it refuses negative results and
// clamps the step.
func TestParseWraps(t *testing.T) {
	got, err := Parse("9999999999y")
	require.NoError(t, err)
	n, unit := time.Duration(9999999999), julianYear
	require.Equal(t, n*unit, got)
	require.Equal(t, "1216990h49m13.298477056s", got.String(), "wrapped around, not 10 billion years")
}

// TestParseDuration: the settings' durations read Go durations and whole
// numbers of Grafana's calendar units, and refuse the empty string (which
// Parse, for min steps, reads as a bare number and refuses differently).
func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "15s", want: 15 * time.Second},
		{in: "1m30s", want: 90 * time.Second},
		{in: "7d", want: 7 * day},
		{in: "2w", want: 2 * week},
		{in: "1M", want: julianMonth},
		{in: "1y", want: julianYear},
		{in: "", wantErr: "empty input"},
		{in: "1.5d", wantErr: `time: unknown unit "d" in duration "1.5d"`},
		{in: "90", wantErr: `time: missing unit in duration "90"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
