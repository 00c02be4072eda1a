package agentapi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// reportBody is one node's answer as an agent sends it: 8 busy GPUs, one
// vLLM process each.
func reportBody(tb testing.TB) []byte {
	var r Report
	r.Node = "node-0001"
	for i := range 8 {
		r.GPUs = append(r.GPUs, GPU{Index: i, UUID: "GPU-5f2ad3c1-0000-1111-2222-333344445555", Name: "NVIDIA H100 80GB HBM3",
			MemoryUsedBytes: Float(7.1e10), MemoryTotalBytes: Float(8.5e10), GPUUtilPercent: Float(93), MemUtilPercent: Float(41),
			TemperatureC: Float(66), PowerWatts: Float(612.5), PowerLimitWatts: Float(700),
			Processes:    []Process{{PID: 4242 + i, UsedMemoryBytes: Float(6.9e10), VLLMInstance: "10.0.0.1:8000", Model: "meta-llama/Llama-3.1-70B-Instruct"}},
			VLLMInstance: "10.0.0.1:8000", Model: "meta-llama/Llama-3.1-70B-Instruct"})
	}
	body, err := json.Marshal(r)
	require.NoError(tb, err)
	return body
}

// TestReportDecodersAgree: the client's decoder reads an agent's answer
// exactly as encoding/json does (the benchmark below compares their cost).
func TestReportDecodersAgree(t *testing.T) {
	body := reportBody(t)
	var want, got Report
	require.NoError(t, json.Unmarshal(body, &want))
	require.NoError(t, reportJSON.Unmarshal(body, &got))
	require.Equal(t, want, got)
	require.Error(t, reportJSON.Unmarshal([]byte(`{"node":"n","gpus":[{"index":"zero"}]}`), &got), "a wrong type is an error")
}

// BenchmarkDecodeReport: one agent's answer decoded by encoding/json (the
// baseline) and by the client's decoder; a fan-out decodes 1,000 of them.
func BenchmarkDecodeReport(b *testing.B) {
	body := reportBody(b)
	for _, c := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"encoding-json", json.Unmarshal}, {"client", reportJSON.Unmarshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var r Report
				if err := c.decode(body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
