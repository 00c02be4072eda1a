package frames

import (
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// LoRATable is the lora query's table: one row per server with the
// adapters it runs and queues now (names joined by ", "), their counts,
// max_lora and when vLLM last reported the set. A max_lora that is not a
// number is null. An empty table still carries the query and notices.
func LoRATable(servers []vllm.LoRAServer, executed string, notices []data.Notice) *data.Frame {
	n := len(servers)
	inst, run, wait := make([]string, n), make([]string, n), make([]string, n)
	nRun, nWait, maxLoRA := make([]int64, n), make([]int64, n), make([]*int64, n)
	updated := make([]time.Time, n)
	for i, s := range servers {
		st := s.Latest
		inst[i], run[i], wait[i] = s.Instance, strings.Join(st.Running, ", "), strings.Join(st.Waiting, ", ")
		nRun[i], nWait[i], updated[i] = int64(len(st.Running)), int64(len(st.Waiting)), st.Updated
		if st.MaxLoRAs >= 0 {
			v := int64(st.MaxLoRAs)
			maxLoRA[i] = &v
		}
	}
	f := data.NewFrame("lora",
		data.NewField("instance", nil, inst),
		data.NewField("running adapters", nil, run),
		data.NewField("waiting adapters", nil, wait),
		data.NewField("running", nil, nRun),
		data.NewField("waiting", nil, nWait),
		data.NewField("max loras", nil, maxLoRA),
		data.NewField("updated", nil, updated),
	)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: executed, Notices: notices})
	return f
}

// LoRASeries frames the running and waiting adapter counts per server
// over time (vllm.LoRACounts) as time series, named by server.
func LoRASeries(servers []vllm.LoRAServer, identity []string, legend, executed string, notices []data.Notice) data.Frames {
	return TimeSeries(vllm.LoRACounts(servers), SeriesOptions{Legend: legend, GroupLabels: identity, Unit: "short",
		Executed: executed, Notices: notices})
}
