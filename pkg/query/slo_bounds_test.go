package query_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
)

// withLe is a scripted Prometheus that also lists le values, as
// /api/v1/label/le/values does, and counts the lookups.
type withLe struct {
	*scripted
	les []string

	mu      sync.Mutex
	lookups []string
}

func (w *withLe) LabelValues(_ context.Context, label, selector string, _, _ time.Time) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lookups = append(w.lookups, label+" "+selector)
	return w.les, nil
}

// answerLe answers every slo expression that selects the bucket le
// (a regex of its spellings, as the executed query shows it) with one
// series, and nothing otherwise, as Prometheus does for a bound no series
// carries.
func answerLe(le string) func(string, v1.Range) model.Matrix {
	return func(expr string, r v1.Range) model.Matrix {
		if strings.Contains(expr, "_bucket") && !strings.Contains(expr, `le=~"`+le+`"`) {
			return nil
		}
		return model.Matrix{{Metric: model.Metric{"model_name": "m"}, Values: []model.SamplePair{{Timestamp: model.TimeFromUnixNano(r.End.UnixNano()), Value: 0.9}}}}
	}
}

// TestSLOReadsTheStoresBounds: a fleet whose TTFT histogram has replaced
// bounds (0.2, 0.7, 3; Prometheus 3 spells 3 as "3.0") gets its threshold
// snapped to those bounds, not vLLM's defaults; the notice lists them; and
// the lookup is cached for the data source.
func TestSLOReadsTheStoresBounds(t *testing.T) {
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	from := to.Add(-time.Hour)
	tests := []struct {
		name      string
		threshold string
		le        string // the le regex the attainment must select
		notice    []string
		noNotice  []string
	}{
		{name: "a replaced bound is used as is", threshold: "0.7", le: `0\\.7`,
			noNotice: []string{"not a bucket bound", "export no"}},
		{name: "a threshold between replaced bounds snaps to the nearest", threshold: "0.5", le: `0\\.7`,
			notice: []string{"using 0.7s", "The bounds the selected series carry for ttft: 0.2, 0.7, 3."}, noNotice: []string{"export no", "0.75"}},
		{name: "both spellings of an integer bound", threshold: "3", le: `3|3\\.0`, noNotice: []string{"not a bucket bound"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &withLe{scripted: &scripted{matrix: answerLe(tt.le)}, les: []string{"0.2", "0.7", "3.0", "+Inf"}}
			e := scriptedExecutor(p)
			js := `{"queryType":"slo","family":"ttft","threshold":"` + tt.threshold + `","window":"1h"}`
			for range 2 {
				r := run(t, e, dq("S", js, from, to)).Responses["S"]
				require.NoError(t, r.Error)
				require.NotEmpty(t, r.Frames)
				require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, `le=~"`+tt.le+`"`)
				text := noticeTexts(r.Frames)
				for _, want := range tt.notice {
					require.Contains(t, text, want)
				}
				for _, not := range tt.noNotice {
					require.NotContains(t, text, not)
				}
			}
			require.Len(t, p.lookups, 1, "the second query reads the cached bounds")
			require.Equal(t, `le {__name__=~"vllm:time_to_first_token_seconds_bucket"}`, p.lookups[0])
		})
	}
}

// TestSLODefaultBoundsWithoutLookup: a store that cannot list le values
// gets vLLM's default bounds, and the notice says they are the defaults.
func TestSLODefaultBoundsWithoutLookup(t *testing.T) {
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for name, p := range map[string]query.Prometheus{
		"no lookup":      &scripted{matrix: answerLe(`0\\.75`)},
		"nothing stored": &withLe{scripted: &scripted{matrix: answerLe(`0\\.75`)}},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, scriptedExecutor(p), dq("S", `{"queryType":"slo","family":"ttft","threshold":0.7}`, to.Add(-time.Hour), to)).Responses["S"]
			require.NoError(t, r.Error)
			require.Contains(t, noticeTexts(r.Frames), "vLLM's default bounds for ttft: 0.001, 0.005")
			require.Contains(t, noticeTexts(r.Frames), "using 0.75s")
		})
	}
}

// TestWaitBelowTheStoresLowestBound: the "below the smallest bucket"
// warning uses the lowest bound the series carry, not vLLM's default (a
// fleet with e2e bounds from 0.05s measures a 0.08s median).
func TestWaitBelowTheStoresLowestBound(t *testing.T) {
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	median := func(string, v1.Range) model.Matrix {
		return model.Matrix{{Metric: model.Metric{"vllm_signal": "p50"}, Values: []model.SamplePair{{Timestamp: model.TimeFromUnixNano(to.UnixNano()), Value: 0.08}}}}
	}
	tests := []struct {
		name string
		les  []string
		warn bool
	}{
		{"replaced bounds from 0.05s", []string{"0.05", "0.1", "1.0", "+Inf"}, false},
		{"vLLM's default bounds from 0.3s", []string{"0.3", "0.5", "+Inf"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &withLe{scripted: &scripted{matrix: median}, les: tt.les}
			r := run(t, scriptedExecutor(p), dq("W", `{"queryType":"waitTime","family":"e2e","quantiles":[0.5]}`, to.Add(-time.Hour), to)).Responses["W"]
			require.NoError(t, r.Error)
			require.Equal(t, tt.warn, strings.Contains(noticeTexts(r.Frames), "smallest histogram bucket"), noticeTexts(r.Frames))
		})
	}
}

// TestSLOWarnsOfEnginesWithoutTheBound: when some selected engines export
// the histogram without the objective's bound (other bucket lists), the
// answer says how many, since their requests all count as over it.
func TestSLOWarnsOfEnginesWithoutTheBound(t *testing.T) {
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		carriers float64
		warn     bool
	}{{"one of three lacks it", 2, true}, {"all carry it", 3, false}} {
		t.Run(tt.name, func(t *testing.T) {
			instant := func(expr string, _ time.Time) model.Vector {
				switch {
				case strings.HasPrefix(expr, "count(group by") && strings.Contains(expr, "_bucket"):
					return model.Vector{{Value: model.SampleValue(tt.carriers)}}
				case strings.HasPrefix(expr, "count(group by"):
					return model.Vector{{Value: 3}}
				}
				return model.Vector{}
			}
			p := &withLe{scripted: &scripted{matrix: answerLe(`0\\.7`), instant: instant}, les: []string{"0.2", "0.7", "+Inf"}}
			r := run(t, scriptedExecutor(p), dq("S", `{"queryType":"slo","threshold":0.7}`, to.Add(-time.Hour), to)).Responses["S"]
			require.NoError(t, r.Error)
			text := noticeTexts(r.Frames)
			require.Equal(t, tt.warn, strings.Contains(text, "1 of the 3 selected engines exporting ttft have no bucket bound at 0.7s"), text)
		})
	}
}
