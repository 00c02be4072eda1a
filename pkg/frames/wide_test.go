package frames

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// wideMatrix is three series on one time column, in no particular order,
// with the signal tag and __name__ TimeSeries rewrites and drops.
func wideMatrix(times []time.Time) prom.Matrix {
	mk := func(instance, signal string, v float64) *prom.Series {
		return &prom.Series{Labels: map[string]string{"instance": instance, vllm.SignalTagLabel: signal, "__name__": "x"},
			Times: times, Values: []float64{v, v + 1}}
	}
	return prom.Matrix{mk("b:1", "arrivals", 3), mk("a:1", "utilisation", 0.5), mk("a:1", "arrivals", 1)}
}

// TestWideTimeSeries: the wide frame is TimeSeries' frames' value fields,
// each as it was (values, labels, display name, unit) and in TimeSeries'
// order, on the series' one time column, with the executed query and the
// notices.
func TestWideTimeSeries(t *testing.T) {
	times := []time.Time{time.Unix(10, 0), time.Unix(40, 0)}
	o := SeriesOptions{GroupLabels: []string{"instance"}, Units: map[string]string{"utilisation": "percentunit"}, Unit: "reqps",
		Executed: "Expr: e", Notices: []data.Notice{{Text: "n"}}}
	m := wideMatrix(times)
	multi := TimeSeries(m, o)
	wide, ok := WideTimeSeries("saturation", m, o)
	require.True(t, ok)
	require.Equal(t, "saturation", wide.Name)
	require.Equal(t, data.FrameTypeTimeSeriesWide, wide.Meta.Type)
	require.Equal(t, data.FrameTypeVersion{0, 1}, wide.Meta.TypeVersion)
	require.Equal(t, "Expr: e", wide.Meta.ExecutedQueryString)
	require.Equal(t, []data.Notice{{Text: "n"}}, wide.Meta.Notices)
	require.Len(t, wide.Fields, len(multi)+1)
	// What Grafana's alerting checks before it reads each value field of a
	// wide frame as one series (its expressions' WideToMany).
	schema := wide.TimeSeriesSchema()
	require.Equal(t, data.TimeSeriesTypeWide, schema.Type)
	require.Equal(t, []int{1, 2, 3}, schema.ValueIndices)
	require.Equal(t, data.TimeSeriesTimeFieldName, wide.Fields[0].Name)
	require.Equal(t, times[1], wide.Fields[0].At(1))
	for i, f := range multi {
		require.Equal(t, f.Fields[1], wide.Fields[i+1], "field %d is frame %d's value field (%s)", i+1, i, f.Name)
	}
	require.Equal(t, "a:1 arrivals", wide.Fields[1].Config.DisplayNameFromDS, "sorted by display name, as TimeSeries sorts")
	require.Equal(t, "percentunit", wide.Fields[2].Config.Unit)
	require.Equal(t, data.Labels{"instance": "a:1", "signal": "utilisation"}, wide.Fields[2].Labels)
	for i, s := range m {
		require.Equal(t, times, s.Times, "series %d left alone", i)
	}
}

// TestWideTimeSeriesNeedsOneTimeColumn: series with other times, or
// none, have no wide frame; the caller falls back to TimeSeries.
func TestWideTimeSeriesNeedsOneTimeColumn(t *testing.T) {
	times := []time.Time{time.Unix(10, 0), time.Unix(40, 0)}
	tests := []struct {
		name string
		m    prom.Matrix
	}{
		{"empty", nil},
		{"a series one step shorter", append(wideMatrix(times), &prom.Series{Labels: map[string]string{"instance": "c:1"}, Times: times[:1], Values: []float64{1}})},
		{"a series at other times", append(wideMatrix(times), &prom.Series{Labels: map[string]string{"instance": "c:1"},
			Times: []time.Time{time.Unix(10, 0), time.Unix(41, 0)}, Values: []float64{1, 2}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := WideTimeSeries("saturation", tt.m, SeriesOptions{})
			require.False(t, ok)
			require.Nil(t, f)
		})
	}
	_, ok := WideTimeSeries("saturation", wideMatrix(times), SeriesOptions{})
	require.True(t, ok, "the same times in other time.Time values are one column")
}

// TestVerdictTimelines: one wide frame whose verdict fields are
// VerdictTimeline's, in the order given, on the shared time field.
func TestVerdictTimelines(t *testing.T) {
	times := []time.Time{time.Unix(10, 0), time.Unix(20, 0)}
	ts := []Timeline{
		{Labels: data.Labels{"instance": "a:1"}, Name: "a:1 verdict", Verdicts: []string{"ok", "idle"}},
		{Labels: data.Labels{"instance": "b:1"}, Name: "b:1 verdict", Verdicts: []string{"queueing — add replicas", "ok"}},
	}
	f := VerdictTimelines("saturation verdicts", times, ts)
	require.Equal(t, "saturation verdicts", f.Name)
	require.Equal(t, data.FrameTypeTimeSeriesWide, f.Meta.Type)
	require.Equal(t, data.FrameTypeVersion{0, 1}, f.Meta.TypeVersion)
	require.Len(t, f.Fields, 3)
	require.Equal(t, "time", f.Fields[0].Name)
	require.Equal(t, times[1], f.Fields[0].At(1))
	for i, tl := range ts {
		require.Equal(t, VerdictTimeline(tl.Labels, tl.Name, times, tl.Verdicts).Fields[1], f.Fields[i+1])
	}
}

// TestWideFramesSurviveArrow: value fields that share the name "Value"
// (or "verdict") keep their labels, names, units and values through the
// SDK's Arrow encoding, which is how they reach Grafana.
func TestWideFramesSurviveArrow(t *testing.T) {
	times := []time.Time{time.Unix(10, 0).UTC(), time.Unix(40, 0).UTC()}
	wide, ok := WideTimeSeries("saturation", wideMatrix(times), SeriesOptions{GroupLabels: []string{"instance"}, Unit: "reqps", Notices: []data.Notice{{Text: "n"}}})
	require.True(t, ok)
	tl := VerdictTimelines("saturation verdicts", times, []Timeline{{Labels: data.Labels{"instance": "a:1"}, Name: "a:1 verdict", Verdicts: []string{"ok", "idle"}}})
	enc, err := data.Frames{wide, tl}.MarshalArrow()
	require.NoError(t, err)
	dec, err := data.UnmarshalArrowFrames(enc)
	require.NoError(t, err)
	require.Len(t, dec, 2)
	for i, want := range []*data.Frame{wide, tl} {
		require.Equal(t, want.Name, dec[i].Name)
		require.Equal(t, want.Meta.Type, dec[i].Meta.Type)
		require.Len(t, dec[i].Fields, len(want.Fields))
		for j, f := range want.Fields {
			got := dec[i].Fields[j]
			require.Equal(t, f.Name, got.Name)
			require.Equal(t, f.Labels, got.Labels)
			require.Equal(t, f.Config, got.Config)
			for k := range f.Len() {
				if tm, ok := f.At(k).(time.Time); ok {
					require.True(t, tm.Equal(got.At(k).(time.Time)), "%s at %d", f.Name, k)
					continue
				}
				require.Equal(t, f.At(k), got.At(k))
			}
		}
	}
	require.Equal(t, []data.Notice{{Text: "n"}}, dec[0].Meta.Notices)
}
