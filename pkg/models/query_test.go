package models

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseQuery(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tr := TimeRange{From: now.Add(-time.Hour), To: now}
	tests := []struct {
		name    string
		qt      string
		js      string
		tr      *TimeRange
		check   func(t *testing.T, q Query)
		wantErr string
	}{
		{name: "queue defaults", js: `{"queryType":"queue","datasource":{"uid":"x"},"intervalMs":1000,"hide":false}`, check: func(t *testing.T, q Query) {
			require.Equal(t, QueryQueue, q.Type)
			require.Equal(t, GroupInstance, q.Grouping)
		}},
		{name: "queryType from Grafana wins", qt: "preemptions", js: `{"queryType":"queue"}`, check: func(t *testing.T, q Query) {
			require.Equal(t, QueryPreemptions, q.Type)
		}},
		{name: "waitTime defaults", js: `{"queryType":"waitTime"}`, check: func(t *testing.T, q Query) {
			require.Equal(t, []float64{0.5, 0.9, 0.99}, optionField(q, "quantiles"))
			require.Equal(t, "queue_time", optionField(q, "family"))
		}},
		{name: "topk defaults", js: `{"queryType":"topk"}`, check: func(t *testing.T, q Query) {
			require.Equal(t, 5, optionField(q, "k"))
			require.Equal(t, "waiting", optionField(q, "rankBy"))
			require.Equal(t, "max", optionField(q, "aggregation"))
		}},
		{name: "k as string from a variable", js: `{"queryType":"topk","k":"12"}`, check: func(t *testing.T, q Query) { require.Equal(t, 12, optionField(q, "k")) }},
		{name: "filters kept literally", js: `{"queryType":"queue","models":["a\"b",".*"],"grouping":"model"}`, check: func(t *testing.T, q Query) {
			require.Equal(t, []string{`a"b`, ".*"}, q.Models)
			require.Equal(t, GroupModel, q.Grouping)
		}},
		{name: "promql", js: `{"queryType":"promql","expr":" up ","unit":"short"}`, check: func(t *testing.T, q Query) {
			require.Equal(t, "up", optionField(q, "expr"))
			require.Equal(t, "short", optionField(q, "unit"))
		}},
		{name: "promql without expr", js: `{"queryType":"promql"}`, wantErr: "expr is empty"},
		{name: "missing type", js: `{}`, wantErr: "queryType is missing; allowed: queue, waitTime, preemptions, topk, gpu"},
		{name: "unknown type", js: `{"queryType":"latency"}`, wantErr: `queryType "latency" is unknown`},
		{name: "malformed", js: `{"queryType":`, wantErr: "malformed query JSON"},
		{name: "quantile too high", js: `{"queryType":"waitTime","quantiles":[0.5,1.5]}`, wantErr: "quantile 1.5 is out of range (0, 1)"},
		{name: "quantile zero", js: `{"queryType":"waitTime","quantiles":[0]}`, wantErr: "quantile 0 is out of range (0, 1)"},
		{name: "unknown family", js: `{"queryType":"waitTime","family":"tpot"}`, wantErr: `family "tpot" is unknown; allowed: queue_time, ttft, itl, e2e, prefill, decode, inference`},
		{name: "k zero", js: `{"queryType":"topk","k":0}`, wantErr: "k 0 is out of range; allowed: whole numbers 1 to 100"},
		{name: "k fraction", js: `{"queryType":"topk","k":2.5}`, wantErr: "k 2.5 is out of range"},
		{name: "k too big", js: `{"queryType":"topk","k":101}`, wantErr: "k 101 is out of range"},
		{name: "k not a number", js: `{"queryType":"topk","k":"many"}`, wantErr: `k "many" is not a number`},
		{name: "topk grouping", js: `{"queryType":"topk","grouping":"model"}`, wantErr: `grouping "model" is not allowed for topk; allowed: instance, instance_engine`},
		{name: "bad grouping", js: `{"queryType":"queue","grouping":"pod"}`, wantErr: `grouping "pod" is not allowed for queue`},
		{name: "rankBy", js: `{"queryType":"topk","rankBy":"gpu"}`, wantErr: `rankBy "gpu" is unknown`},
		{name: "aggregation", js: `{"queryType":"topk","aggregation":"p95"}`, wantErr: `aggregation "p95" is unknown; allowed: max, avg, last`},
		{name: "empty filter", js: `{"queryType":"queue","instances":[""]}`, wantErr: "instances contains an empty value"},
		{name: "reversed range", js: `{"queryType":"queue"}`, tr: &TimeRange{From: now, To: now.Add(-time.Hour)}, wantErr: "time range ends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tr
			if tt.tr != nil {
				r = *tt.tr
			}
			q, err := ParseQuery(Request{RefID: "A", QueryType: tt.qt, JSON: json.RawMessage(tt.js), TimeRange: r})
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, q)
		})
	}
}
