package models

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseSaturationSettings(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		want    SaturationSettings
		wantErr string
	}{
		{name: "defaults", js: `{}`, want: DefaultSaturation()},
		{name: "empty", js: ``, want: DefaultSaturation()},
		{name: "all set", js: `{"saturationKvHigh":0.95,"saturationQueue":3,"saturationPreemptions":0.5,"saturationIdle":0.2}`,
			want: SaturationSettings{KVHigh: 0.95, Queue: 3, Preemptions: 0.5, Idle: 0.2}},
		{name: "kv at its top edge", js: `{"saturationKvHigh":1}`, want: SaturationSettings{KVHigh: 1, Queue: 1, Preemptions: 0.01, Idle: 0.1}},
		{name: "kv above 1", js: `{"saturationKvHigh":1.5}`, wantErr: "saturationKvHigh 1.5 is out of range"},
		{name: "zero queue", js: `{"saturationQueue":0}`, wantErr: "saturationQueue 0 is out of range"},
		{name: "negative preemptions", js: `{"saturationPreemptions":-1}`, wantErr: "saturationPreemptions -1"},
		{name: "idle is a string", js: `{"saturationIdle":"x"}`, wantErr: "saturation thresholds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSaturationSettings([]byte(tt.js))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, errors.Is(err, ErrInvalidSettings))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestDiagnosisOptions(t *testing.T) {
	tests := []struct {
		name, js       string
		wantFormat     string
		wantGrouping   Grouping
		wantErrContain string
	}{
		{name: "fleet defaults", js: `{"queryType":"fleet"}`, wantFormat: "table", wantGrouping: GroupInstanceEngine},
		{name: "fleet refuses series", js: `{"queryType":"fleet","format":"series"}`, wantErrContain: `format "series" is unknown; allowed: table`},
		{name: "fleet refuses grouping by model", js: `{"queryType":"fleet","grouping":"model"}`, wantErrContain: "allowed: instance_engine"},
		{name: "saturation defaults", js: `{"queryType":"saturation"}`, wantFormat: "both", wantGrouping: GroupInstance},
		{name: "saturation per engine table", js: `{"queryType":"saturation","grouping":"instance_engine","format":"table"}`, wantFormat: "table", wantGrouping: GroupInstanceEngine},
		{name: "saturation refuses none", js: `{"queryType":"saturation","grouping":"none"}`, wantErrContain: "allowed: instance, instance_engine"},
		{name: "saturation refuses a bad format", js: `{"queryType":"saturation","format":"pie"}`, wantErrContain: "allowed: both, table, series"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(dataQuery(tt.js))
			if tt.wantErrContain != "" {
				require.ErrorContains(t, err, tt.wantErrContain)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantFormat, optionField(q, "format"))
			require.Equal(t, tt.wantGrouping, q.Grouping)
		})
	}
}

func dataQuery(js string) Request {
	now := time.Unix(1_700_000_000, 0)
	return Request{RefID: "A", JSON: json.RawMessage(js), TimeRange: TimeRange{From: now.Add(-time.Hour), To: now}}
}
