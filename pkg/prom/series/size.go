package series

import (
	"math/bits"
	"unsafe"
)

// The estimates below count what a kept answer holds on the heap, as the
// Go runtime lays it out, so a cache's budget bounds what the process
// retains rather than the payload bytes alone: every allocation rounded up
// to its size class, slices at their capacity, label maps at the size of
// their groups (Go's maps keep eight slots per group and fill at most
// seven eighths of them), and each label name and value as its own string,
// as the decoder makes them. pkg/prom's TestCacheEstimateMatchesTheHeap
// compares them with the heap growth of retaining real decoded answers.
const (
	// PtrBytes is a pointer, the element of a Matrix or a model.Vector.
	PtrBytes = int64(unsafe.Sizeof(uintptr(0)))
	// StringHeader is a string's header, as a slice of strings holds it.
	StringHeader = int64(unsafe.Sizeof(""))
	timeBytes    = int64(unsafe.Sizeof(Series{}.Times[0]))
	seriesBytes  = int64(unsafe.Sizeof(Series{}))
	// mapHeader is a map's own header, and tableHeader (with its
	// directory slot) what a map of more than eight entries adds.
	mapHeader   = 48
	tableHeader = 48 + 8
)

// AllocBytes is what the runtime hands out for an allocation of n bytes:
// n rounded up to its size class (about an eighth of the power of two
// below it, pages beyond 32 KiB).
func AllocBytes(n int64) int64 {
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
		return mapHeader + AllocBytes(group)
	}
	capacity := 16
	for n > capacity*7/8 {
		capacity *= 2
	}
	return mapHeader + tableHeader + AllocBytes(int64(capacity/8)*group)
}

// LabelsBytes estimates a label set: its map and its strings. It is
// generic so that a Series' labels and a model.Metric (whose names and
// values are strings too) are counted by the same rule.
func LabelsBytes[K, V ~string](l map[K]V) int64 {
	n := mapBytes(len(l), 2*StringHeader)
	for k, v := range l {
		n += AllocBytes(int64(len(k))) + AllocBytes(int64(len(v)))
	}
	return n
}

// matrixBytes estimates a decoded matrix: the slice of series, each
// series, its label set and its two columns at their capacity.
func matrixBytes(m Matrix) int64 {
	n := AllocBytes(int64(cap(m)) * PtrBytes)
	for _, s := range m {
		n += AllocBytes(seriesBytes) + LabelsBytes(s.Labels)
		n += AllocBytes(int64(cap(s.Times))*timeBytes) + AllocBytes(int64(cap(s.Values))*8)
	}
	return n
}
