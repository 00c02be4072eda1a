package prom

import (
	"math/bits"
	"unsafe"

	"github.com/prometheus/common/model"
)

// The estimates below count what a kept answer holds on the heap, as the
// Go runtime lays it out, so the budget bounds what the process retains
// rather than the payload bytes alone: every allocation rounded up to its
// size class, slices at their capacity, label maps at the size of their
// groups (Go's maps keep eight slots per group and fill at most seven
// eighths of them), and each label name and value as its own string, as
// the decoder makes them. TestCacheEstimateMatchesTheHeap compares them
// with the heap growth of retaining real decoded answers.
const (
	timeBytes    = int64(unsafe.Sizeof(Series{}.Times[0]))
	seriesBytes  = int64(unsafe.Sizeof(Series{}))
	sampleBytes  = int64(unsafe.Sizeof(model.Sample{}))
	ptrBytes     = int64(unsafe.Sizeof(uintptr(0)))
	stringHeader = int64(unsafe.Sizeof(""))
	// mapHeader is a map's own header, and tableHeader (with its
	// directory slot) what a map of more than eight entries adds.
	mapHeader   = 48
	tableHeader = 48 + 8
	// entryOverhead is what the cache spends to keep one answer besides
	// the answer itself: the entry, its done channel, the context of its
	// fetch, its list elements and its map slot (the key is not counted).
	entryOverhead = 512
)

// allocBytes is what the runtime hands out for an allocation of n bytes:
// n rounded up to its size class (about an eighth of the power of two
// below it, pages beyond 32 KiB).
func allocBytes(n int64) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 16:
		return (n + 7) &^ 7
	case n <= 256:
		return (n + 15) &^ 15
	case n > 32<<10:
		return (n + 8191) &^ 8191
	}
	g := int64(1) << (bits.Len64(uint64(n)) - 4) // an eighth of n's power of two, halved
	return (n + g - 1) / g * g
}

// mapBytes estimates a map of n entries whose slots (key and value) take
// slot bytes each.
func mapBytes(n int, slot int64) int64 {
	group := 8 + 8*slot // one control word and eight slots
	if n <= 8 {
		return mapHeader + allocBytes(group)
	}
	capacity := 16
	for n > capacity*7/8 {
		capacity *= 2
	}
	return mapHeader + tableHeader + allocBytes(int64(capacity/8)*group)
}

// labelsBytes estimates a label set: its map and its strings.
func labelsBytes(l map[string]string) int64 {
	n := mapBytes(len(l), 2*stringHeader)
	for k, v := range l {
		n += allocBytes(int64(len(k))) + allocBytes(int64(len(v)))
	}
	return n
}

// matrixBytes estimates a decoded matrix: the slice of series, each
// series, its label set and its two columns at their capacity.
func matrixBytes(m Matrix) int64 {
	n := allocBytes(int64(cap(m)) * ptrBytes)
	for _, s := range m {
		n += allocBytes(seriesBytes) + labelsBytes(s.Labels)
		n += allocBytes(int64(cap(s.Times))*timeBytes) + allocBytes(int64(cap(s.Values))*8)
	}
	return n
}

// vectorBytes estimates an instant answer: its samples and their label sets.
func vectorBytes(v model.Vector) int64 {
	n := allocBytes(int64(cap(v)) * ptrBytes)
	for _, s := range v {
		n += allocBytes(sampleBytes) + mapBytes(len(s.Metric), 2*stringHeader)
		for k, val := range s.Metric {
			n += allocBytes(int64(len(k))) + allocBytes(int64(len(val)))
		}
	}
	return n
}

// resultBytes estimates a result kept in the cache, with its entry.
func resultBytes(r Result) int64 {
	n := entryOverhead + matrixBytes(r.Matrix) + vectorBytes(r.Vector)
	n += allocBytes(int64(cap(r.Warnings)) * stringHeader)
	for _, w := range r.Warnings {
		n += allocBytes(int64(len(w)))
	}
	return n
}
