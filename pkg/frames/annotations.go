package frames

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// Annotations builds the frame Grafana reads as annotations: fields time,
// timeEnd (a region when it differs from time), title, text and tags. A
// region starts at the event's From, not at the counter's rise: vLLM counts
// a preemption late (see vllm.PreemptionLateness). The notices say what the
// answer lacks.
func Annotations(events []vllm.Event, instanceLabel, executed string, notices []data.Notice) *data.Frame {
	n := len(events)
	times, ends := make([]time.Time, n), make([]time.Time, n)
	titles, texts := make([]string, n), make([]string, n)
	tags := make([]json.RawMessage, n)
	for i, e := range events {
		times[i], ends[i] = e.From, e.End
		titles[i] = fmt.Sprintf("Preemptions on %s engine %s", e.Instance, engineName(e.Engine))
		texts[i] = eventText(e)
		tags[i] = eventTags(e, instanceLabel)
	}
	f := data.NewFrame("preemptions",
		data.NewField("time", nil, times),
		data.NewField("timeEnd", nil, ends),
		data.NewField("title", nil, titles),
		data.NewField("text", nil, texts),
		data.NewField("tags", nil, tags),
	)
	// No DataTopic: annotation queries read annotations from the series frames.
	f.SetMeta(&data.FrameMeta{ExecutedQueryString: executed, Notices: notices})
	return f
}

// engineName shows V0 engines, which have no engine label, as "0".
func engineName(e string) string {
	if e == "" {
		return "0"
	}
	return e
}

func eventText(e vllm.Event) string {
	word := "preemptions"
	if e.Count == 1 {
		word = "preemption"
	}
	kv := "KV-cache usage unknown"
	if !math.IsNaN(e.KVUsage) {
		kv = fmt.Sprintf("KV cache peaked at %.0f%% used", e.KVUsage*100)
	}
	return fmt.Sprintf("%g %s (%s) on model %s, counted from %s. vLLM counts a preemption when the preempted request next produces output, "+
		"so the region and its KV peak reach back %s before the sample preceding the count.",
		e.Count, word, kv, e.Model, e.Start.UTC().Format(time.TimeOnly), strings.TrimSuffix(vllm.PreemptionLateness.String(), "0s"))
}

func eventTags(e vllm.Event, instanceLabel string) json.RawMessage {
	b, _ := json.Marshal([]string{"model:" + e.Model, instanceLabel + ":" + e.Instance, "engine:" + engineName(e.Engine), "preemption"})
	return b
}
