package models

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func parseJSON(js string) (Query, error) {
	now := time.Unix(1_700_000_000, 0)
	return ParseQuery(Request{RefID: "A", JSON: json.RawMessage(js), TimeRange: TimeRange{From: now.Add(-time.Hour), To: now}})
}

func TestParseSLO(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		want    SLOOptions
		group   Grouping
		wantErr string
	}{
		{name: "defaults show data at once", js: `{"queryType":"slo"}`, group: GroupModel,
			want: SLOOptions{Objective: "latency", Family: "ttft", Threshold: 1, Target: 0.99, Window: "28d", WindowDuration: 28 * 24 * time.Hour}},
		{name: "all options", js: `{"queryType":"slo","family":"itl","threshold":0.05,"target":0.999,"window":"7d","grouping":"instance"}`, group: GroupInstance,
			want: SLOOptions{Objective: "latency", Family: "itl", Threshold: 0.05, Target: 0.999, Window: "7d", WindowDuration: 7 * 24 * time.Hour}},
		{name: "numbers as strings from variables", js: `{"queryType":"slo","family":"e2e","threshold":" 2.5","target":"0.9","window":"1h"}`, group: GroupModel,
			want: SLOOptions{Objective: "latency", Family: "e2e", Threshold: 2.5, Target: 0.9, Window: "1h", WindowDuration: time.Hour}},
		{name: "unknown family", js: `{"queryType":"slo","family":"prefill"}`, wantErr: `family "prefill" is unknown; allowed: ttft, itl, e2e, queue_time`},
		{name: "zero threshold", js: `{"queryType":"slo","threshold":0}`, wantErr: "threshold 0 is out of range"},
		{name: "huge threshold", js: `{"queryType":"slo","threshold":1e300}`, wantErr: "threshold 1e+300 is out of range"},
		{name: "threshold not a number", js: `{"queryType":"slo","threshold":"fast"}`, wantErr: `threshold "fast" is not a number`},
		{name: "NaN threshold", js: `{"queryType":"slo","threshold":"NaN"}`, wantErr: `threshold "NaN" is not a number`},
		{name: "threshold object", js: `{"queryType":"slo","threshold":{}}`, wantErr: "threshold {} is not a number"},
		{name: "target of one leaves no budget", js: `{"queryType":"slo","target":1}`, wantErr: "target 1 is out of range (0, 1)"},
		{name: "target as percent", js: `{"queryType":"slo","target":99}`, wantErr: "write 99% as 0.99"},
		{name: "bad window", js: `{"queryType":"slo","window":"a month"}`, wantErr: `window "a month" is not a Prometheus duration`},
		{name: "window too short", js: `{"queryType":"slo","window":"5m"}`, wantErr: "window 5m is out of range; allowed: 1h to 366d"},
		{name: "window too long", js: `{"queryType":"slo","window":"2y"}`, wantErr: "window 2y is out of range"},
		{name: "one burn pair for an alert rule", js: `{"queryType":"slo","signals":["burn_1h_5m"]}`, group: GroupModel,
			want: SLOOptions{Objective: "latency", Family: "ttft", Threshold: 1, Target: 0.99, Window: "28d", WindowDuration: 28 * 24 * time.Hour, Signals: []string{"burn_1h_5m"}}},
		{name: "unknown signal", js: `{"queryType":"slo","signals":["burn_2h"]}`, wantErr: `signals "burn_2h" is unknown; allowed: attainment, error_budget_left, burn_1h_5m`},
		{name: "variable left in alerting", js: `{"queryType":"slo","target":"$target"}`, wantErr: `target "$target" is not a number`},
		{name: "availability defaults to three nines", js: `{"queryType":"slo","objective":"availability"}`, group: GroupModel,
			want: SLOOptions{Objective: "availability", Target: 0.999, Window: "28d", WindowDuration: 28 * 24 * time.Hour}},
		{name: "availability ignores a latency family and threshold left by the editor",
			js: `{"queryType":"slo","objective":"availability","family":"prefill","threshold":0,"target":"0.995","window":"7d","grouping":"instance"}`, group: GroupInstance,
			want: SLOOptions{Objective: "availability", Target: 0.995, Window: "7d", WindowDuration: 7 * 24 * time.Hour}},
		{name: "availability target of one", js: `{"queryType":"slo","objective":"availability","target":1}`, wantErr: "target 1 is out of range (0, 1)"},
		{name: "availability target of zero", js: `{"queryType":"slo","objective":"availability","target":0}`, wantErr: "target 0 is out of range (0, 1)"},
		{name: "availability target as percent", js: `{"queryType":"slo","objective":"availability","target":"99.9"}`, wantErr: "target 99.9 is out of range (0, 1)"},
		{name: "unknown objective", js: `{"queryType":"slo","objective":"uptime"}`, wantErr: `objective "uptime" is unknown; allowed: latency, availability`},
		{name: "objective not a string", js: `{"queryType":"slo","objective":1}`, wantErr: "malformed query JSON: objective is 1, not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := parseJSON(tt.js)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, QuerySLO, q.Type)
			require.Equal(t, tt.want, q.Options.(SLOOptions))
			require.Equal(t, tt.group, q.Grouping)
		})
	}
}

func TestSLOString(t *testing.T) {
	q, err := parseJSON(`{"queryType":"slo","family":"ttft","threshold":0.5,"target":0.995}`)
	require.NoError(t, err)
	require.Equal(t, "99.5% of ttft under 0.5s over 28d", q.Options.(SLOOptions).String())
	q, err = parseJSON(`{"queryType":"slo","objective":"availability","window":"30d"}`)
	require.NoError(t, err)
	require.Equal(t, "99.9% of requests without error over 30d", q.Options.(SLOOptions).String())
}

// FuzzParseSLO feeds arbitrary slo options: parsing never panics, and
// what it accepts is an objective the PromQL and the budget can use.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{
		`{"queryType":"slo"}`, `{"queryType":"slo","threshold":"1e-400"}`, `{"queryType":"slo","threshold":-0}`,
		`{"queryType":"slo","target":"0.99999999999999999"}`, `{"queryType":"slo","target":"Inf"}`,
		`{"queryType":"slo","window":"0s"}`, `{"queryType":"slo","window":"9999999999999y"}`, `{"queryType":"slo","window":"1h30m"}`,
		`{"queryType":"slo","family":"ttft\u0000"}`, `{"queryType":"slo","threshold":[1]}`, `{"queryType":"slo","grouping":"instance_engine"}`, `{"queryType":"slo","signals":["attainment",""]}`,
		`{"queryType":"slo","objective":"availability","target":"0.999999999999999999"}`, `{"queryType":"slo","objective":"availability","threshold":-1}`,
		`{"queryType":"slo","objective":"Availability"}`, `{"queryType":"slo","objective":null,"target":1e-320}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		q, err := parseJSON(js)
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("error %v does not wrap ErrInvalidQuery", err)
			}
			return
		}
		if q.Type != QuerySLO {
			return
		}
		s := q.Options.(SLOOptions)
		if s.Objective == SLOAvailability {
			if s.Family != "" || s.Threshold != 0 {
				t.Fatalf("availability kept family %q threshold %v", s.Family, s.Threshold)
			}
		} else if s.Objective != SLOLatency {
			t.Fatalf("accepted objective %q", s.Objective)
		} else if !(s.Threshold > 0 && s.Threshold <= MaxSLOThreshold) || math.IsNaN(s.Threshold) {
			t.Fatalf("accepted threshold %v", s.Threshold)
		}
		if !(s.Target > 0 && s.Target < 1) {
			t.Fatalf("accepted target %v", s.Target)
		}
		if s.WindowDuration < MinSLOWindow || s.WindowDuration > MaxSLOWindow || s.Window == "" {
			t.Fatalf("accepted window %q (%s)", s.Window, s.WindowDuration)
		}
		for _, sig := range s.Signals {
			if oneOf("signals", sig, SLOSignals) != nil {
				t.Fatalf("accepted signal %q", sig)
			}
		}
		if err := oneOf("family", s.Family, SLOFamilies); s.Objective == SLOLatency && err != nil {
			t.Fatalf("accepted family %q", s.Family)
		}
	})
}
