package models

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLimitsInclusive pins each documented limit at its edge: the limit
// itself is accepted and one step past it is refused, so a comparison that
// drifts by one (< for <=, > for >=) fails here.
func TestLimitsInclusive(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tr := TimeRange{From: now.Add(-time.Hour), To: now}
	parseK := func(k string) (Query, error) {
		return ParseQuery(Request{RefID: "A", JSON: json.RawMessage(`{"queryType":"topk","k":` + k + `}`), TimeRange: tr})
	}
	t.Run("k", func(t *testing.T) {
		for _, tt := range []struct {
			k       string
			want    int
			wantErr string
		}{
			{k: "1", want: 1},
			{k: `"1"`, want: 1},
			{k: "100", want: MaxK},
			{k: `"100"`, want: MaxK},
			{k: "0", wantErr: "k 0 is out of range"},
			{k: "101", wantErr: "k 101 is out of range"},
		} {
			t.Run(tt.k, func(t *testing.T) {
				q, err := parseK(tt.k)
				if tt.wantErr != "" {
					require.ErrorIs(t, err, ErrInvalidQuery)
					require.ErrorContains(t, err, tt.wantErr)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.want, optionField(q, "k"))
			})
		}
	})

	t.Run("maxConcurrentQueries", func(t *testing.T) {
		for _, tt := range []struct {
			n       string
			want    int
			wantErr bool
		}{
			{n: "1", want: 1},
			{n: "100", want: MaxConcurrentQueriesLimit},
			{n: "0", wantErr: true},
			{n: "101", wantErr: true},
		} {
			t.Run(tt.n, func(t *testing.T) {
				s, err := fromJSON("http://prom:9090", jsonSettings{MaxConcurrentQueries: json.Number(tt.n)})
				if tt.wantErr {
					require.ErrorIs(t, err, ErrInvalidSettings)
					require.ErrorContains(t, err, `maxConcurrentQueries "`+tt.n+`" is out of range`)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.want, s.MaxConcurrentQueries)
			})
		}
	})

	t.Run("durations", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			js      jsonSettings
			wantErr string
		}{
			{name: "zero scrape interval", js: jsonSettings{ScrapeInterval: "0s"}, wantErr: `scrapeInterval "0s" is not a positive duration`},
			{name: "zero query timeout", js: jsonSettings{QueryTimeout: "0s"}, wantErr: `queryTimeout "0s" is not a positive duration`},
			{name: "1ms scrape interval", js: jsonSettings{ScrapeInterval: "1ms"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := fromJSON("http://prom:9090", tt.js)
				if tt.wantErr != "" {
					require.ErrorIs(t, err, ErrInvalidSettings)
					require.ErrorContains(t, err, tt.wantErr)
					return
				}
				require.NoError(t, err)
			})
		}
	})

	t.Run("matchers length", func(t *testing.T) {
		// `a="…"` is 4 bytes plus the value.
		atLimit := `a="` + strings.Repeat("x", MaxMatchersLength-4) + `"`
		require.Len(t, atLimit, MaxMatchersLength)
		for _, tt := range []struct {
			name    string
			raw     string
			wantErr bool
		}{
			{name: "exactly the limit", raw: atLimit},
			{name: "the limit in braces", raw: "{" + atLimit + "}"},
			{name: "trailing space is trimmed before the limit", raw: atLimit + " "},
			{name: "one byte over", raw: `a="` + strings.Repeat("x", MaxMatchersLength-3) + `"`, wantErr: true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ms, err := ParseMatchers("selector", tt.raw)
				if tt.wantErr {
					require.ErrorIs(t, err, ErrInvalidMatchers)
					require.ErrorContains(t, err, "selector is longer than 4096 bytes")
					return
				}
				require.NoError(t, err)
				require.Len(t, ms, 1)
				require.Equal(t, "a", ms[0].Name)
			})
		}
	})
}
