package models

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseSettingsStallWindow: the stall window defaults to the alert's 3m
// (or two scrapes when they are longer) and must cover two scrapes.
func TestParseSettingsStallWindow(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    time.Duration
		wantErr string
	}{
		{name: "the alert's window by default", json: `{}`, want: 3 * time.Minute},
		{name: "two long scrapes by default", json: `{"scrapeInterval":"2m"}`, want: 4 * time.Minute},
		{name: "own window", json: `{"stallWindow":"10m"}`, want: 10 * time.Minute},
		{name: "exactly two scrapes", json: `{"scrapeInterval":"30s","stallWindow":"1m"}`, want: time.Minute},
		{name: "shorter than two scrapes", json: `{"scrapeInterval":"30s","stallWindow":"59s"}`,
			wantErr: `stallWindow "59s" is shorter than two scrape intervals (1m0s)`},
		{name: "not a duration", json: `{"stallWindow":"soon"}`, wantErr: `stallWindow "soon" is not a positive duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSettings(Instance{URL: "http://p", JSONData: []byte(tt.json)})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorIs(t, err, ErrInvalidSettings)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.StallWindow)
		})
	}
}
