package frames

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// specDecodeUnits: the acceptance rates are shares; the mean acceptance
// length is tokens per draft (short).
var specDecodeUnits = map[string]string{vllm.SpecMeanLength: "short"}

// SpecDecode frames the specDecode answer as TimeSeries does, with each
// per-position series' signal named by its position
// ("acceptance_rate_pos0" for the first drafted token), so every position
// has its own display name; the position label stays. The answer's series
// are shared with the result cache and are not changed.
func SpecDecode(m prom.Matrix, o SeriesOptions) data.Frames {
	out := make(prom.Matrix, 0, len(m))
	for _, s := range m {
		if s.Labels[vllm.SignalTagLabel] != vllm.SpecPositionSignal {
			out = append(out, s)
			continue
		}
		c := *s
		c.Labels = make(map[string]string, len(s.Labels))
		for k, v := range s.Labels {
			c.Labels[k] = v
		}
		c.Labels[vllm.SignalTagLabel] = "acceptance_rate_pos" + s.Labels[vllm.SpecPositionLabel]
		out = append(out, &c)
	}
	o.Units, o.Unit = specDecodeUnits, "percentunit"
	return TimeSeries(out, o)
}
