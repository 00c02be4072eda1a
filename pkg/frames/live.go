package frames

import (
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Frames pushed on the data source's Grafana Live channels (pkg/live). A
// channel carries one frame per tick, so every tick's frame has the same
// shape while the fleet does: Grafana's streaming frame appends a tick
// whose schema matches the last one and starts over when it changes.

// LiveTimeField names the time column of a live frame.
const LiveTimeField = "time"

// LiveSeries is one wide frame holding the newest point of each series of
// a time-series answer (frames as TimeSeries builds them): a time column
// with that newest time and one column per series, with the series'
// labels, display name and unit. A series with no point at that time (an
// engine that stopped reporting) is null in its column, not its old value.
// Frame 0's notices go on the live frame, which is named name.
func LiveSeries(name string, series data.Frames, at time.Time) *data.Frame {
	newest := time.Time{}
	for _, f := range series {
		if t, _, ok := lastPoint(f); ok && t.After(newest) {
			newest = t
		}
	}
	if newest.IsZero() {
		newest = at
	}
	out := data.NewFrame(name, data.NewField(LiveTimeField, nil, []time.Time{newest}))
	for _, f := range series {
		t, v, ok := lastPoint(f)
		if len(f.Fields) < 2 {
			continue
		}
		var cell *float64
		if ok && t.Equal(newest) {
			cell = &v
		}
		src := f.Fields[1]
		field := data.NewField(src.Name, src.Labels.Copy(), []*float64{cell})
		if src.Config != nil {
			cfg := *src.Config
			field.Config = &cfg
		}
		out.Fields = append(out.Fields, field)
	}
	out.SetMeta(&data.FrameMeta{Notices: noticesOf(series)})
	return out
}

// lastPoint is the newest finite sample of a Time/Value series frame.
func lastPoint(f *data.Frame) (time.Time, float64, bool) {
	if f == nil || len(f.Fields) < 2 || f.Rows() == 0 {
		return time.Time{}, 0, false
	}
	i := f.Rows() - 1
	t, okT := f.Fields[0].At(i).(time.Time)
	v, okV := f.Fields[1].ConcreteAt(i)
	fv, isF := v.(float64)
	return t, fv, okT && okV && isF
}

func noticesOf(fs data.Frames) []data.Notice {
	if len(fs) == 0 || fs[0].Meta == nil {
		return nil
	}
	return append([]data.Notice(nil), fs[0].Meta.Notices...)
}

// LiveTable is a table answer (the fleet table) as a live frame: the same
// columns and rows under the channel's name, with its notices; the
// executed query stays with the polled answer, where the query inspector
// shows it.
func LiveTable(name string, table *data.Frame) *data.Frame {
	out := data.NewFrame(name, table.Fields...)
	meta := data.FrameMeta{}
	if table.Meta != nil {
		meta.Notices = append([]data.Notice(nil), table.Meta.Notices...)
	}
	out.SetMeta(&meta)
	return out
}

// LiveError is the frame a channel gets when a tick fails (Prometheus
// down, a timeout): its time and an error notice saying what failed, so
// the panel shows the outage where it happened; the next good tick's
// frame follows as usual.
func LiveError(name string, at time.Time, msg string) *data.Frame {
	out := data.NewFrame(name, data.NewField(LiveTimeField, nil, []time.Time{at}))
	out.SetMeta(&data.FrameMeta{Notices: []data.Notice{{Severity: data.NoticeSeverityError, Text: msg}}})
	return out
}
