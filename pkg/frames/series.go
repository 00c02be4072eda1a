package frames

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// FieldSignalLabel is the label on each value field that names its signal
// (running, waiting, p99, …): what users see in legends and alert rules
// group by, so series stay unique for alerting. Frames write it in place
// of the query's internal tag, vllm.SignalTagLabel.
const FieldSignalLabel = "signal"

// SeriesOptions says how to label and name series.
type SeriesOptions struct {
	// Legend is a Grafana legend format: {{label}} is replaced by its value.
	Legend string
	// GroupLabels build the default display name, in order.
	GroupLabels []string
	// Units maps a signal to a Grafana unit id; missing signals get Unit.
	Units map[string]string
	Unit  string
	// Executed is the ExecutedQueryString of frame 0.
	Executed string
	// Notices go on frame 0.
	Notices []data.Notice
}

// TimeSeries builds one timeseries-multi frame per series, sorted by display
// name so output is stable. An empty result still yields one empty frame that
// carries the executed query and notices.
func TimeSeries(m prom.Matrix, o SeriesOptions) data.Frames {
	keyed := make([]keyedFrame, 0, len(m))
	for _, s := range m {
		f := seriesFrame(s, o)
		keyed = append(keyed, keyedFrame{frameKey(f), f})
	}
	// Keys once per frame, not once per comparison: at a thousand series
	// the label strings were most of the conversion's cost.
	sort.SliceStable(keyed, func(i, j int) bool { return keyed[i].key < keyed[j].key })
	frames := make(data.Frames, len(keyed))
	for i, k := range keyed {
		frames[i] = k.f
	}
	if len(frames) == 0 {
		frames = append(frames, data.NewFrame(""))
	}
	for _, f := range frames {
		f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
	}
	frames[0].Meta.ExecutedQueryString = o.Executed
	frames[0].Meta.Notices = o.Notices
	return frames
}

type keyedFrame struct {
	key string
	f   *data.Frame
}

func frameKey(f *data.Frame) string {
	if len(f.Fields) < 2 {
		return f.Name
	}
	return f.Name + "\x00" + f.Fields[1].Labels.String()
}

// seriesFrame converts one series: Time and Value fields, labels on Value.
// The decoded columns become the fields as they are (one copy each, no
// per-point work); the series itself is left untouched, as the result
// cache shares it.
func seriesFrame(s *prom.Series, o SeriesOptions) *data.Frame {
	value := valueField(s, o)
	return data.NewFrame(value.Config.DisplayNameFromDS, data.NewField(data.TimeSeriesTimeFieldName, nil, s.Times), value)
}

// valueField is a series' value field: its values, labelled (the signal
// tag renamed, __name__ dropped) and named as its frame is.
func valueField(s *prom.Series, o SeriesOptions) *data.Field {
	labels := make(data.Labels, len(s.Labels))
	for k, v := range s.Labels {
		switch k {
		case vllm.SignalTagLabel:
			labels[FieldSignalLabel] = v
		case metricNameLabel:
		default:
			labels[k] = v
		}
	}
	name := DisplayName(labels, o.Legend, o.GroupLabels)
	value := data.NewField(data.TimeSeriesValueFieldName, labels, s.Values)
	value.Config = &data.FieldConfig{DisplayNameFromDS: name, Unit: unitFor(labels[FieldSignalLabel], o)}
	return value
}

// metricNameLabel is Prometheus' __name__, which frames never show.
const metricNameLabel = "__name__"

func unitFor(signal string, o SeriesOptions) string {
	if u, ok := o.Units[signal]; ok {
		return u
	}
	return o.Unit
}

var legendRE = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// DisplayName renders the legend, or else "<group values> <signal>[ (reason)]".
func DisplayName(labels data.Labels, legend string, groupLabels []string) string {
	if legend != "" {
		return legendRE.ReplaceAllStringFunc(legend, func(m string) string {
			return labels[legendRE.FindStringSubmatch(m)[1]]
		})
	}
	var parts []string
	for _, g := range groupLabels {
		if v := labels[g]; v != "" {
			parts = append(parts, v)
		}
	}
	name := strings.Join(parts, "/")
	if sig := labels[FieldSignalLabel]; sig != "" {
		if sig == "waiting_by_reason" {
			sig = "waiting"
		}
		name = strings.TrimSpace(name + " " + sig)
	}
	if r := labels["reason"]; r != "" {
		name += fmt.Sprintf(" (%s)", r)
	}
	if name == "" && len(labels) > 0 {
		// Raw PromQL: name the series as Prometheus' own data source does.
		return labels.String()
	}
	if name == "" {
		return "value"
	}
	return name
}

// Executed formats ExecutedQueryString as Grafana's Prometheus source does.
func Executed(expr string, step time.Duration) string {
	return fmt.Sprintf("Expr: %s\nStep: %s", expr, step)
}
