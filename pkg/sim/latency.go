package sim

// LatencyCounts returns the fleet's queue-time and TTFT histograms summed
// over its engines, as per-bucket counts (not cumulative; +Inf last) over
// QueueTimeBounds and TTFTBounds: what the engines have observed so far, the
// same observations vLLM exports. A what-if reads these instead of the
// request log, so a long run need not keep one (the log was most of a run's
// allocations).
func (f *Fleet) LatencyCounts() (queue, ttft []uint64) {
	until, _ := f.clock()
	queue = make([]uint64, len(requestLatencyBuckets)+1)
	ttft = make([]uint64, len(ttftBuckets)+1)
	for _, e := range f.engines {
		e.mu.Lock()
		e.advanceTo(until)
		addCounts(queue, e.h.queue.counts)
		addCounts(ttft, e.h.ttft.counts)
		e.mu.Unlock()
	}
	return queue, ttft
}

func addCounts(dst, src []uint64) {
	for i, c := range src {
		dst[i] += c
	}
}
