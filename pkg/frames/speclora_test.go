package frames

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// TestSpecDecodeNamesPositionsWithoutTouchingTheAnswer: each position gets
// its own display name, and the answer's series (shared with the result
// cache) keep their labels.
func TestSpecDecodeNamesPositionsWithoutTouchingTheAnswer(t *testing.T) {
	at := []time.Time{time.Unix(100, 0)}
	pos := &prom.Series{Labels: map[string]string{"instance": "a", vllm.SignalTagLabel: vllm.SpecPositionSignal, "position": "1"}, Times: at, Values: []float64{0.5}}
	rate := &prom.Series{Labels: map[string]string{"instance": "a", vllm.SignalTagLabel: vllm.SpecAcceptanceRate}, Times: at, Values: []float64{0.6}}
	length := &prom.Series{Labels: map[string]string{"instance": "a", vllm.SignalTagLabel: vllm.SpecMeanLength}, Times: at, Values: []float64{2.1}}
	fs := SpecDecode(prom.Matrix{pos, rate, length}, SeriesOptions{GroupLabels: []string{"instance"}})
	require.Len(t, fs, 3)
	units := map[string]string{}
	for _, f := range fs {
		units[f.Name] = f.Fields[1].Config.Unit
	}
	require.Equal(t, map[string]string{"a acceptance_rate": "percentunit", "a acceptance_rate_pos1": "percentunit", "a mean_acceptance_length": "short"}, units)
	require.Equal(t, vllm.SpecPositionSignal, pos.Labels[vllm.SignalTagLabel], "the cached series is unchanged")
}

func TestLoRATableNullMaxAndEmpty(t *testing.T) {
	srv := vllm.LoRAServer{Instance: "a", Latest: vllm.LoRAState{Running: []string{"x", "y"}, Waiting: []string{"y"}, MaxLoRA: "?", MaxLoRAs: -1, Updated: time.Unix(5, 0)}}
	f := LoRATable([]vllm.LoRAServer{srv}, "Expr: q", nil)
	require.Equal(t, 1, f.Rows())
	require.Equal(t, "x, y", f.Fields[1].At(0))
	require.Equal(t, int64(2), f.Fields[3].At(0))
	require.Nil(t, f.Fields[5].At(0), "a max_lora that is not a number is null, not 0")
	srv.Latest.MaxLoRAs = 0 // V0's max_lora=0 (LoRA off) is a number: shown as 0, not left empty
	require.Equal(t, int64(0), *LoRATable([]vllm.LoRAServer{srv}, "Expr: q", nil).Fields[5].At(0).(*int64))
	empty := LoRATable(nil, "Expr: q", nil)
	require.Equal(t, 0, empty.Rows())
	require.Equal(t, "Expr: q", empty.Meta.ExecutedQueryString)
}
