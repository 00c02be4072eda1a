package query

import (
	"slices"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// DefaultWideAbove is how many groups a saturation answer may have before
// its series and verdict timelines come as wide frames (Executor.WideAbove).
// A fleet of 1,000 instances gives 4,000 frames per series and per group;
// at 5,000 instances those 20,000 frames were four fifths of the plugin's
// own time on the answer (their Arrow encoding, and its garbage), and as
// much again for Grafana to decode. Below it nothing changes.
const DefaultWideAbove = 1000

// wideAbove is the executor's cut-over, DefaultWideAbove when unset.
func (e *Executor) wideAbove() int {
	if e.WideAbove > 0 {
		return e.WideAbove
	}
	return DefaultWideAbove
}

// saturationSeries is the series and verdict-timeline part of a
// saturation answer: a frame per series and one per group, or, with more
// groups than the executor's cut-over, the same fields as one wide frame
// of series and one of timelines, with a notice that says so. o carries
// the answer's executed query and notices, which go on its first frame.
func (p *plan) saturationSeries(series prom.Matrix, tls []frames.Timeline, times []time.Time, o frames.SeriesOptions) data.Frames {
	if len(tls) > p.exec.wideAbove() {
		wo := o
		wo.Notices = append(slices.Clip(o.Notices), frames.WideNotice(len(tls), p.exec.wideAbove()))
		if f, ok := frames.WideTimeSeries("saturation", series, wo); ok {
			return data.Frames{f, frames.VerdictTimelines("saturation verdicts", times, tls)}
		}
	}
	out := frames.TimeSeries(series, o)
	for _, t := range tls {
		out = append(out, frames.VerdictTimeline(t.Labels, t.Name, times, t.Verdicts))
	}
	return out
}
