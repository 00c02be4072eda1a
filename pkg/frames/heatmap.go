package frames

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// FrameTypeHeatmapRows is Grafana's "heatmap-rows" frame type
// (DataFrameType.HeatmapRows in @grafana/data; the Go SDK has no
// constant): the first field is time, each other field one bucket, a row
// of the heatmap.
const FrameTypeHeatmapRows data.FrameType = "heatmap-rows"

// HeatmapOptions says how to name heatmap frames and their buckets.
type HeatmapOptions struct {
	// Legend is a Grafana legend format for the frame name.
	Legend string
	// GroupLabels build the default frame name, in order.
	GroupLabels []string
	// Unit is the unit of the bucket values (counts).
	Unit string
	// Executed is the ExecutedQueryString of frame 0.
	Executed string
	// Notices go on frame 0.
	Notices []data.Notice
}

// Heatmap turns cumulative le buckets into heatmap-rows frames the way
// Grafana's Prometheus data source does with format=heatmap: series are
// grouped by their labels other than le, each group's buckets sorted by
// their numeric bound (+Inf last), every bucket minus the bucket below it
// (differences under 1e-9, which only rounding or mixed bucket lists
// produce, become 0), and one frame per group holds the time field and a
// field per bucket named by its le. Bounds that differ only in spelling
// ("1" and "1.0") are one bucket. An empty result still yields one frame
// that carries the executed query and notices.
func Heatmap(m prom.Matrix, o HeatmapOptions) data.Frames {
	groups := groupBuckets(m)
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	frames := make(data.Frames, 0, len(keys))
	for _, k := range keys {
		frames = append(frames, heatmapFrame(groups[k], o))
	}
	sort.SliceStable(frames, func(i, j int) bool { return frames[i].Name < frames[j].Name })
	if len(frames) == 0 {
		frames = append(frames, data.NewFrame(""))
	}
	for _, f := range frames {
		// Grafana's merged frame keeps the meta of the series frames it
		// came from (timeseries-multi 0.1) with the type replaced.
		f.SetMeta(&data.FrameMeta{Type: FrameTypeHeatmapRows, TypeVersion: data.FrameTypeVersion{0, 1}})
	}
	frames[0].Meta.ExecutedQueryString = o.Executed
	frames[0].Meta.Notices = o.Notices
	return frames
}

// bucketGroup is the le buckets of one group, keyed by bound.
type bucketGroup struct {
	labels  data.Labels
	buckets map[float64]*bucket
}

// bucket is one le bound's cumulative counts by time.
type bucket struct {
	le     string
	bound  float64
	counts map[int64]float64   // by time in Unix nanoseconds
	times  map[int64]time.Time // each time as the series had it
}

// groupBuckets sorts series into groups by their labels other than le;
// series whose le is not a number are left out.
func groupBuckets(m prom.Matrix) map[string]*bucketGroup {
	groups := map[string]*bucketGroup{}
	for _, s := range m {
		le, ok := s.Labels["le"]
		bound, err := strconv.ParseFloat(strings.TrimSpace(le), 64)
		if !ok || err != nil || math.IsNaN(bound) {
			continue
		}
		ls := frameLabels(s.Labels)
		delete(ls, "le")
		key := ls.String()
		g := groups[key]
		if g == nil {
			g = &bucketGroup{labels: ls, buckets: map[float64]*bucket{}}
			groups[key] = g
		}
		g.add(le, bound, s)
	}
	return groups
}

// frameLabels are a series' labels as frames show them: the signal tag
// renamed to FieldSignalLabel, __name__ dropped.
func frameLabels(in map[string]string) data.Labels {
	out := make(data.Labels, len(in))
	for k, v := range in {
		switch k {
		case vllm.SignalTagLabel:
			out[FieldSignalLabel] = v
		case metricNameLabel:
		default:
			out[k] = v
		}
	}
	return out
}

// add sums s into the bucket of bound (two spellings of one bound add up).
func (g *bucketGroup) add(le string, bound float64, s *prom.Series) {
	b := g.buckets[bound]
	if b == nil {
		b = &bucket{le: le, bound: bound, counts: map[int64]float64{}, times: map[int64]time.Time{}}
		g.buckets[bound] = b
	}
	for i, t := range s.Times {
		if v := s.Values[i]; !math.IsNaN(v) {
			b.counts[t.UnixNano()] += v
			b.times[t.UnixNano()] = t
		}
	}
}

// heatmapFrame de-accumulates one group's buckets into a frame.
func heatmapFrame(g *bucketGroup, o HeatmapOptions) *data.Frame {
	bs := make([]*bucket, 0, len(g.buckets))
	for _, b := range g.buckets {
		bs = append(bs, b)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].bound < bs[j].bound })
	times := unionTimes(bs)
	name := DisplayName(g.labels, o.Legend, o.GroupLabels)
	fields := data.Fields{data.NewField(data.TimeSeriesTimeFieldName, nil, times)}
	below := make([]float64, len(times)) // the cumulative count under the previous bound
	for _, b := range bs {
		counts := make([]float64, len(times))
		for i, t := range times {
			cum, ok := b.counts[t.UnixNano()]
			if !ok {
				cum = below[i] // a missing bucket adds nothing
			}
			if d := cum - below[i]; d >= 1e-9 {
				counts[i] = d
			}
			below[i] = cum
		}
		ls := g.labels.Copy()
		ls["le"] = b.le
		f := data.NewField(b.le, ls, counts)
		f.Config = &data.FieldConfig{DisplayNameFromDS: b.le, Unit: o.Unit}
		fields = append(fields, f)
	}
	return data.NewFrame(name, fields...)
}

// unionTimes are the times any bucket has a count at, ascending.
func unionTimes(bs []*bucket) []time.Time {
	seen := map[int64]bool{}
	var out []time.Time
	for _, b := range bs {
		for n, t := range b.times {
			if !seen[n] {
				seen[n] = true
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
