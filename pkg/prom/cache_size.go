package prom

import (
	"unsafe"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// The estimates below extend pkg/prom/series' (a matrix's, see its
// size.go for how the runtime's layout is counted) to the rest of what the
// cache keeps: an instant answer, the warnings and the entry itself.
// TestCacheEstimateMatchesTheHeap compares them with the heap growth of
// retaining real decoded answers.
const (
	sampleBytes = int64(unsafe.Sizeof(model.Sample{}))
	// entryOverhead is what the cache spends to keep one answer besides
	// the answer itself: the entry, its done channel, the context of its
	// fetch, its list elements and its map slot (the key is not counted).
	entryOverhead = 512
)

// vectorBytes estimates an instant answer: its samples and their label sets.
func vectorBytes(v model.Vector) int64 {
	n := series.AllocBytes(int64(cap(v)) * series.PtrBytes)
	for _, s := range v {
		n += series.AllocBytes(sampleBytes) + series.LabelsBytes(s.Metric)
	}
	return n
}

// resultBytes estimates a result kept in the cache, with its entry.
func resultBytes(r Result) int64 {
	n := entryOverhead + r.Matrix.SizeBytes() + vectorBytes(r.Vector)
	n += series.AllocBytes(int64(cap(r.Warnings)) * series.StringHeader)
	for _, w := range r.Warnings {
		n += series.AllocBytes(int64(len(w)))
	}
	return n
}
