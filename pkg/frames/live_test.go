package frames_test

import (
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

var liveT0 = time.Unix(1_700_000_000, 0).UTC()

// queueSeries is a queue answer as the queue handler frames it: three
// series, one of which (an engine gone quiet) stops a step early.
func queueSeries() data.Frames {
	at := func(s ...int) []time.Time {
		out := make([]time.Time, len(s))
		for i, sec := range s {
			out[i] = liveT0.Add(time.Duration(sec) * time.Second)
		}
		return out
	}
	m := prom.Matrix{
		{Labels: map[string]string{"instance": "a:8000", "vllm_signal": "waiting"}, Times: at(0, 1, 2), Values: []float64{3, 5, 8}},
		{Labels: map[string]string{"instance": "a:8000", "vllm_signal": "running"}, Times: at(0, 1, 2), Values: []float64{30, 32, 32}},
		{Labels: map[string]string{"instance": "b:8000", "vllm_signal": "waiting"}, Times: at(0, 1), Values: []float64{1, 0}},
	}
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: "reqs", GroupLabels: []string{"instance"},
		Notices: []data.Notice{{Severity: data.NoticeSeverityInfo, Text: "read from the recording rules"}}})
}

func TestLiveSeries(t *testing.T) {
	tests := []struct {
		name   string
		series data.Frames
		check  func(t *testing.T, f *data.Frame)
	}{
		{name: "live-queue", series: queueSeries(), check: func(t *testing.T, f *data.Frame) {
			require.Equal(t, liveT0.Add(2*time.Second), f.Fields[0].At(0), "the newest point's time")
			byName := map[string]*float64{}
			for _, fd := range f.Fields[1:] {
				byName[fd.Config.DisplayNameFromDS] = fd.At(0).(*float64)
			}
			require.Equal(t, 8.0, *byName["a:8000 waiting"])
			require.Equal(t, 32.0, *byName["a:8000 running"])
			require.Nil(t, byName["b:8000 waiting"], "a series without a point at that time is null, not its old value")
			require.Equal(t, "read from the recording rules", f.Meta.Notices[0].Text)
		}},
		{name: "live-queue-empty", series: frames.TimeSeries(nil, frames.SeriesOptions{}), check: func(t *testing.T, f *data.Frame) {
			require.Len(t, f.Fields, 1, "only the time column")
			require.Equal(t, liveT0.Add(time.Minute), f.Fields[0].At(0), "no point: the tick's time")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := frames.LiveSeries("queue", tt.series, liveT0.Add(time.Minute))
			require.Equal(t, "queue", f.Name)
			tt.check(t, f)
			experimental.CheckGoldenJSONFrame(t, "testdata", tt.name, f, updateGolden())
		})
	}
}

func TestLiveTableAndError(t *testing.T) {
	// A table of the fleet's shape, built here rather than by FleetTable
	// so that new fleet columns do not rewrite this golden.
	table := data.NewFrame("fleet", data.NewField("instance", nil, []string{"a:8000", "b:8000"}),
		data.NewField("state", nil, []string{"down", "up"}), data.NewField("waiting", nil, []*float64{nil, ptr(2)}))
	table.SetMeta(&data.FrameMeta{ExecutedQueryString: "Expr: up",
		Notices: []data.Notice{{Severity: data.NoticeSeverityWarning, Text: "no KV-cache series"}}})
	f := frames.LiveTable("fleet", table)
	require.Equal(t, "fleet", f.Name)
	require.Equal(t, table.Rows(), f.Rows())
	require.Equal(t, "no KV-cache series", f.Meta.Notices[0].Text)
	require.Empty(t, f.Meta.ExecutedQueryString)
	experimental.CheckGoldenJSONFrame(t, "testdata", "live-fleet", f, updateGolden())

	e := frames.LiveError("queue", liveT0, "Prometheus is unreachable")
	require.Equal(t, data.NoticeSeverityError, e.Meta.Notices[0].Severity)
	require.Equal(t, "Prometheus is unreachable", e.Meta.Notices[0].Text)
	require.Equal(t, liveT0, e.Fields[0].At(0))
	experimental.CheckGoldenJSONFrame(t, "testdata", "live-error", e, updateGolden())
}

func ptr(v float64) *float64 { return &v }
