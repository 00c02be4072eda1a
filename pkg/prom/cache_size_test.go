package prom

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fleetAnswer is a range answer as Prometheus sends one for a fleet:
// series engines' series of a vLLM gauge with the labels a Kubernetes
// scrape gives them, points samples each.
func fleetAnswer(series, points int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range series {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"__name__":"vllm:num_requests_running","engine":"%d","instance":"10.1.%d.%d:8000",`+
			`"job":"vllm","model_name":"meta-llama/Llama-3.1-8B-Instruct","namespace":"inference",`+
			`"pod":"vllm-llama-8b-%05d-7c9f8","node":"gpu-node-%03d","container":"vllm","service":"vllm-llama-8b"},"values":[`,
			i%8, i/256, i%256, i, i/8)
		for p := range points {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%d,"%d"]`, 1_700_000_000+15*p, (i*p)%97)
		}
		b.WriteString("]}")
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestCacheEstimateMatchesTheHeap: what the cache counts for the answers
// it keeps is close to what keeping them costs the process, measured as
// the growth of the live heap, so the budget bounds real memory.
func TestCacheEstimateMatchesTheHeap(t *testing.T) {
	tests := []struct {
		name           string
		series, points int
		kept           int
	}{
		{name: "1,000 series of an hour at 15s", series: 1000, points: 240, kept: 6},
		{name: "1,000 series of one point (labels dominate)", series: 1000, points: 1, kept: 20},
		{name: "20 series of a day at 1m", series: 20, points: 1440, kept: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fleetAnswer(tt.series, tt.points)
			fetch := func(context.Context) (Result, error) {
				m, err := DecodeMatrix(bytes.NewReader(body))
				return Result{Matrix: m}, err
			}
			c := NewCache(1<<40, nil)
			before := heapInUse()
			for i := range tt.kept {
				_, err := c.Do(context.Background(), fmt.Sprint("k", i), fetch, fixedTTL(time.Hour))
				require.NoError(t, err)
			}
			grown := heapInUse() - before
			counted := c.Stats().Bytes
			require.Equal(t, tt.kept, c.Stats().Entries)
			runtime.KeepAlive(c)
			ratio := float64(counted) / float64(grown)
			t.Logf("counted %d bytes, heap grew %d: ratio %.2f", counted, grown, ratio)
			// Within a third either way: the estimate before label maps and
			// size classes were counted saw 0.61 of the one-point answer.
			require.GreaterOrEqual(t, ratio, 0.75, "the process keeps much more than the budget counts")
			require.LessOrEqual(t, ratio, 1.33, "the budget counts much more than the process keeps")
		})
	}
}
