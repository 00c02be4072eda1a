package sim

import (
	"container/list"
	"fmt"
	"math"
	"slices"
	"time"
)

// KV offloading to CPU memory, as vLLM's native OffloadingConnector does it
// (--kv-offloading-size <GiB> --kv-offloading-backend native; vllm/config
// turns the size into cpu_bytes_to_use = size·2^30 and the tier holds
// cpu_bytes_to_use / bytes-per-block blocks).
//
// What vLLM does, and the simulator with it (offloading/scheduler.py at
// 055e47c28):
//   - Stores are write-through, not on eviction: after every step each
//     scheduled request offers the blocks it has fully computed since its
//     last store (prompt and output) to the CPU tier; blocks the tier holds
//     already are skipped. One prepare_store per request per step: when
//     the tier cannot make room (free blocks plus evictable ones, LRU) the
//     whole call fails, kv_offload_allocation_failure counts one, and the
//     blocks are offered again next step.
//   - A store runs asynchronously; its blocks are pinned (write-pending)
//     until it completes, and only completed, unread blocks can be evicted.
//     Bytes, time and size are counted when a transfer completes.
//   - A waiting request looks up the GPU prefix cache first; the blocks
//     after the GPU hit are looked up in the CPU tier (a consecutive run),
//     and those are loaded back (CPU→GPU) before the request computes.
//     GPU hits count in prefix_cache_hits, CPU hits are the connector's
//     (external_prefix_cache_hits, prompt_tokens_by_source
//     external_kv_transfer); prompt_tokens_cached_by_source splits the
//     cached prompt tokens into device and host.
//
// The content model: with offloading on, a request's reusable prefix (the
// same draw as PrefixHitRate's) is the start of one of PrefixPopulation
// shared prefixes, block i of prefix d being the same KV for every request
// that uses d; the rest of each request is its own. The GPU prefix cache is
// then real: a request's shared blocks are on the GPU while it runs and in
// the free-block LRU after it finishes, evicted as allocations need free
// blocks, so hits on the GPU and in the tier follow the working set.
//
// Simplifications: the GPU's LRU tracks the shared blocks only (a finished
// request's own blocks, which vLLM frees first, are not in it), so shared
// blocks stay on the GPU a little longer than in vLLM; the prefix cache is
// looked up at a request's first admission only (a preempted request keeps
// what it found); a load does not delay the request (it overlaps the step);
// a block whose store has not completed counts as a miss (vLLM defers the
// request until it can be read, so the async lookup-delay histogram is
// never observed); the lookup's own duration is a model, lookupBase plus
// lookupPerKey per block looked up; one chunk is one GPU block.

// OffloadNative is EngineParams.KVOffloadingBackend for vLLM's own CPU
// offloading, the only backend simulated.
const OffloadNative = "native"

// The modelled duration of one offload lookup call.
const (
	lookupBase   = 20 * time.Microsecond
	lookupPerKey = time.Microsecond
)

// Bucket lists of the offload families (offloading/metrics.py at 055e47c28).
var (
	offloadSizeBuckets        = []float64{1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6}
	offloadLookupSyncBuckets  = []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}
	offloadLookupAsyncBuckets = []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
)

// blockKey names the KV of one block: block idx of shared prefix doc
// (doc ≥ 0), or of request -doc's own tokens (doc < 0).
type blockKey struct {
	doc int64
	idx int
}

// lruSet is an ordered set, least recently used first.
type lruSet struct {
	l list.List
	m map[blockKey]*list.Element
}

func (s *lruSet) len() int { return len(s.m) }

func (s *lruSet) has(k blockKey) bool { _, ok := s.m[k]; return ok }

// push adds k as the most recently used.
func (s *lruSet) push(k blockKey) {
	if s.m == nil {
		s.m = map[blockKey]*list.Element{}
	}
	s.m[k] = s.l.PushBack(k)
}

func (s *lruSet) remove(k blockKey) bool {
	el, ok := s.m[k]
	if ok {
		s.l.Remove(el)
		delete(s.m, k)
	}
	return ok
}

// pop removes and returns the least recently used key.
func (s *lruSet) pop() blockKey {
	k := s.l.Remove(s.l.Front()).(blockKey)
	delete(s.m, k)
	return k
}

// cpuBlock is one block the CPU tier holds.
type cpuBlock struct {
	writing bool // its store has not completed
	readers int  // loads in flight reading it
}

// offloadJob is one transfer in flight.
type offloadJob struct {
	done  time.Duration
	keys  []blockKey
	store bool
	bytes int64
	dur   time.Duration
}

// offloadState is an engine's offload tier and the GPU prefix cache it
// sits behind, with their counters. Its zero value is "off"; bySource is
// kept for every V1 engine (a 0.32 engine exports it without offloading).
type offloadState struct {
	on         bool
	blockBytes int64
	bandwidth  float64 // bytes per second
	population int

	held         map[blockKey]int // shared blocks on the GPU, by running requests holding them
	gpuFree      lruSet           // shared blocks in free GPU blocks, evictable
	gpuEvictions int64
	firstEvict   time.Duration // sim time of the first GPU eviction; never before

	capacity                 int
	cpu                      map[blockKey]*cpuBlock
	cpuFree                  lruSet // completed, unread blocks: evictable
	writePending, readPinned int
	jobs                     []offloadJob

	loadBytes, storeBytes int64
	loadTime, storeTime   time.Duration
	loads, stores         int64
	failures              int64
	cpuEvictions          int64
	loadSize, storeSize   histogram
	lookupSync            histogram
	stepped               bool // the engine has stepped: the usage gauges exist
	bySource              [numCacheSources]int64
	firstHostHit          time.Duration
}

// Cache sources of prompt_tokens_cached_by_source (CacheHitSource in
// vllm/v1/metrics/cache_hit_source.py at 8548f56c1, nearest tier first).
const (
	sourceDevice = iota
	sourceHost
	sourceP2P
	sourceDisk
	sourceExternal
	numCacheSources
)

var cacheSourceNames = [numCacheSources]string{"device", "host", "p2p", "disk", "external_unspecified"}

// newOffloadState sizes the tier: kv_offloading_size GiB over the bytes of
// one block.
func newOffloadState(p EngineParams, gen Generation) offloadState {
	o := offloadState{firstEvict: never, firstHostHit: never}
	if p.KVOffloadingSize <= 0 || gen != V1 {
		return o
	}
	o.on = true
	o.blockBytes = int64(p.KVBytesPerToken) * int64(p.BlockSize)
	o.bandwidth = p.KVOffloadBandwidth
	o.population = p.PrefixPopulation
	o.capacity = int(p.KVOffloadingSize * (1 << 30) / float64(o.blockBytes))
	o.held = map[blockKey]int{}
	o.cpu = map[blockKey]*cpuBlock{}
	o.loadSize, o.storeSize = newHistogram(offloadSizeBuckets), newHistogram(offloadSizeBuckets)
	o.lookupSync = newHistogram(offloadLookupSyncBuckets)
	return o
}

// validateOffload checks the offload flags against the instance.
func (ic InstanceConfig) validateOffload() error {
	p := ic.Engine
	if p.KVOffloadingSize < 0 || math.IsNaN(p.KVOffloadingSize) || math.IsInf(p.KVOffloadingSize, 0) {
		return fmt.Errorf("%w: kv_offloading_size is %v GiB, must be ≥ 0 (0: off)", ErrInvalidConfig, p.KVOffloadingSize)
	}
	if p.KVOffloadingSize == 0 {
		return nil
	}
	switch {
	case p.KVOffloadingBackend != "" && p.KVOffloadingBackend != OffloadNative:
		return fmt.Errorf("%w: kv_offloading_backend %q is not simulated (only %q)", ErrInvalidConfig, p.KVOffloadingBackend, OffloadNative)
	case ic.Generation != V1:
		return fmt.Errorf("%w: kv_offloading_size needs generation v1 (V0 had no OffloadingConnector)", ErrInvalidConfig)
	case ic.Role != "":
		return fmt.Errorf("%w: kv_offloading_size with role %q needs two KV connectors (MultiConnector), which is not simulated", ErrInvalidConfig, ic.Role)
	case p.KVOffloadBandwidth <= 0 || math.IsInf(p.KVOffloadBandwidth, 0) || p.PrefixPopulation < 1 || p.KVBytesPerToken < 1:
		return fmt.Errorf("%w: with kv_offloading_size, kv_offload_bandwidth, prefix_population and kv_bytes_per_token must be > 0", ErrInvalidConfig)
	}
	return nil
}

// drawPrefix gives r its shared prefix and how much of it is reusable;
// where it is cached is found when r is first scheduled.
func (e *engine) drawPrefix(r *request) {
	r.doc = e.rng.IntN(e.off.population)
	r.reusable = 0
	if e.p.PrefixHitRate > 0 {
		r.reusable = e.prefixHit(r.prompt)
	}
}

// blockOf is the key of r's block i.
func (r *request) blockOf(i, blockSize int) blockKey {
	if i < r.reusable/blockSize {
		return blockKey{int64(r.doc), i}
	}
	return blockKey{-int64(r.id), i}
}

// offloadLookup sets r.cached and r.host from the GPU prefix cache and the
// CPU tier, before r's first admission (each scheduling attempt looks up
// again, as vLLM's get_num_new_matched_tokens does).
func (e *engine) offloadLookup(r *request) {
	if !e.off.on || r.prefixCounted {
		return
	}
	// Transfers done by now count, however time was chopped.
	e.completeOffload()
	bs, shared := e.p.BlockSize, r.reusable/e.p.BlockSize
	g := 0
	for e.p.PrefixCaching && g < shared && e.onGPU(r.blockOf(g, bs)) {
		g++
	}
	h := 0
	for g+h < shared {
		c := e.off.cpu[r.blockOf(g+h, bs)]
		if c == nil || c.writing {
			break
		}
		h++
	}
	keys := min(h+1, shared-g)
	e.off.lookupSync.observe(seconds(lookupBase + time.Duration(keys)*lookupPerKey))
	r.cached, r.host = (g+h)*bs, h*bs
}

func (e *engine) onGPU(k blockKey) bool { return e.off.held[k] > 0 || e.off.gpuFree.has(k) }

// hold marks shared block k as on the GPU for one more running request.
func (e *engine) hold(k blockKey) {
	e.off.gpuFree.remove(k)
	e.off.held[k]++
}

// offloadAdmit runs when r is admitted: its cached shared blocks are held
// on the GPU, and at its first admission the CPU hits are loaded.
func (e *engine) offloadAdmit(r *request) {
	if !e.off.on {
		return
	}
	bs := e.p.BlockSize
	if e.p.PrefixCaching {
		for upto := min(r.cached, r.reusable) / bs; r.held < upto; r.held++ {
			e.hold(r.blockOf(r.held, bs))
		}
	}
	if !r.prefixCounted {
		e.touchCPU(r)
	}
	if !r.prefixCounted && r.host > 0 {
		from := (r.cached - r.host) / bs
		keys := make([]blockKey, 0, r.host/bs)
		for i := from; i < r.cached/bs; i++ {
			k := r.blockOf(i, bs)
			e.pinRead(k)
			keys = append(keys, k)
		}
		e.startJob(keys, false)
		r.stored = r.cached / bs // vLLM's block-level policy skips the hit chunks
		e.off.firstHostHit = min(e.off.firstHostHit, e.now)
	}
	e.trimGPUCache()
}

// touchCPU makes r's shared blocks the tier holds the most recently used,
// as the connector touches a request's keys when it looks them up.
func (e *engine) touchCPU(r *request) {
	for i := range r.reusable / e.p.BlockSize {
		if k := r.blockOf(i, e.p.BlockSize); e.off.cpuFree.remove(k) {
			e.off.cpuFree.push(k)
		}
	}
}

func (e *engine) pinRead(k blockKey) {
	c := e.off.cpu[k]
	if c.readers == 0 {
		e.off.readPinned++
		e.off.cpuFree.remove(k)
	}
	c.readers++
}

// trimGPUCache evicts the least recently freed shared blocks until the
// free-block LRU fits the free blocks: an allocation took the rest.
func (e *engine) trimGPUCache() {
	if !e.off.on {
		return
	}
	for e.off.gpuFree.len() > e.freeBlocks {
		e.off.gpuFree.pop()
		e.off.gpuEvictions++
		e.off.firstEvict = min(e.off.firstEvict, e.now)
	}
}

// offloadFree runs when r gives its blocks back (finished or preempted):
// its shared blocks join the free-block LRU, the last block first, as
// vLLM frees a request's blocks in reverse so its prefix is evicted last.
func (e *engine) offloadFree(r *request) {
	if !e.off.on {
		return
	}
	for i := r.held - 1; i >= 0; i-- {
		k := r.blockOf(i, e.p.BlockSize)
		if e.off.held[k]--; e.off.held[k] <= 0 {
			delete(e.off.held, k)
			e.off.gpuFree.push(k)
		}
	}
	r.held = 0
}

// offloadAfterStep completes the transfers that are done, then lets every
// request of the step hold its newly computed shared blocks and offer its
// newly computed blocks to the tier.
func (e *engine) offloadAfterStep() {
	if !e.off.on {
		return
	}
	e.completeOffload()
	e.off.stepped = true
	bs := e.p.BlockSize
	for _, s := range e.batch {
		r := s.r
		full := min(r.computed, r.numTokens) / bs
		if e.p.PrefixCaching && !r.done {
			for upto := min(full, r.reusable/bs); r.held < upto; r.held++ {
				e.hold(r.blockOf(r.held, bs))
			}
		}
		e.storeBlocks(r, full)
	}
}

// storeBlocks is one prepare_store: r's blocks from r.stored to full that
// the tier lacks, all or none.
func (e *engine) storeBlocks(r *request, full int) {
	if full <= r.stored {
		return
	}
	var fresh []blockKey
	for i := r.stored; i < full; i++ {
		if k := r.blockOf(i, e.p.BlockSize); e.off.cpu[k] == nil {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) > 0 && !e.reserveCPU(len(fresh)) {
		e.off.failures++
		return
	}
	for _, k := range fresh {
		e.off.cpu[k] = &cpuBlock{writing: true}
	}
	e.off.writePending += len(fresh)
	if len(fresh) > 0 {
		e.startJob(fresh, true)
	}
	r.stored = full
}

// reserveCPU makes room for n blocks, evicting the least recently used
// evictable ones; it reports false, evicting nothing, when it cannot.
func (e *engine) reserveCPU(n int) bool {
	free := e.off.capacity - len(e.off.cpu)
	if free+e.off.cpuFree.len() < n {
		return false
	}
	for ; free < n; free++ {
		delete(e.off.cpu, e.off.cpuFree.pop())
		e.off.cpuEvictions++
	}
	return true
}

// startJob starts a transfer of keys: bytes over the bandwidth.
func (e *engine) startJob(keys []blockKey, store bool) {
	b := int64(len(keys)) * e.off.blockBytes
	dur := time.Duration(float64(b) / e.off.bandwidth * 1e9)
	e.off.jobs = append(e.off.jobs, offloadJob{done: e.now + dur, keys: keys, store: store, bytes: b, dur: dur})
}

// completeOffload applies the transfers done by now, in completion order:
// stored blocks become evictable, loaded ones unpinned, and the counters
// count them. A wedged engine's transfers never complete: its hung worker
// runs them.
func (e *engine) completeOffload() {
	if !e.off.on || len(e.off.jobs) == 0 || e.wedged {
		return
	}
	slices.SortStableFunc(e.off.jobs, func(a, b offloadJob) int { return cmpDuration(a.done, b.done) })
	n := 0
	for n < len(e.off.jobs) && e.off.jobs[n].done <= e.now {
		e.finishJob(e.off.jobs[n])
		n++
	}
	e.off.jobs = slices.Delete(e.off.jobs, 0, n)
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (e *engine) finishJob(j offloadJob) {
	o := &e.off
	for _, k := range j.keys {
		c := o.cpu[k]
		if j.store {
			c.writing = false
			o.writePending--
		} else if c.readers--; c.readers == 0 {
			o.readPinned--
		}
		if !c.writing && c.readers == 0 {
			o.cpuFree.push(k)
		}
	}
	if j.store {
		o.stores++
		o.storeBytes += j.bytes
		o.storeTime += j.dur
		o.storeSize.observe(float64(j.bytes))
		return
	}
	o.loads++
	o.loadBytes += j.bytes
	o.loadTime += j.dur
	o.loadSize.observe(float64(j.bytes))
}

// countCachedBySource books r's cached prompt tokens by tier, when its
// first token counts its prompt (as prompt_tokens_cached does).
func (e *engine) countCachedBySource(r *request) {
	e.off.bySource[sourceDevice] += int64(r.cached - r.host - r.external)
	e.off.bySource[sourceHost] += int64(r.host)
}

// usage is the share of the tier pinned by transfers in flight (the CPU
// manager's get_stats: write-pending and read blocks over all blocks).
func (o *offloadState) usage(pinned int) float64 {
	if o.capacity == 0 {
		return 0
	}
	return float64(pinned) / float64(o.capacity)
}
