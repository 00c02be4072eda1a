package sim

import (
	"slices"
	"time"
)

// PreemptionEvent is one recompute preemption, as the engine saw it. SimTime
// is the true instant. vLLM V1's num_preemptions_total counts it only when
// the victim's next output reaches the frontend (Reported, at
// ReportedSimTime), and never when the client aborts first; V0 counted at
// once.
type PreemptionEvent struct {
	SimTime time.Duration // simulated time since the fleet's start
	Time    time.Time     // the wall time SimTime maps to (see Fleet.WallTime)

	Reported        bool          // num_preemptions_total has counted it
	ReportedSimTime time.Duration // when it was counted, if Reported
	ReportedTime    time.Time     // the wall time ReportedSimTime maps to, if Reported

	Instance  int // index in Config.Instances
	Engine    int // data-parallel rank: the engine label ("0" for V0 instances, which have none)
	Model     string
	Addr      string // the instance's host:port, once started
	RequestID uint64
	KVUsage   float64 // fraction of KV blocks in use just before the preemption
	Running   int     // running requests after it
	Waiting   int     // waiting requests after it
}

// CompletedRequest is one finished request with its true timings.
type CompletedRequest struct {
	Instance, Engine int
	Model            string
	ID               uint64
	Arrival          time.Duration // simulated time of arrival
	Finished         time.Duration // simulated time of the last token
	Wait             time.Duration // all time spent waiting, re-queueing after preemptions included
	QueueTime        time.Duration // the first wait only: what vllm:request_queue_time_seconds observes
	TTFT             time.Duration
	E2E              time.Duration
	PromptTokens     int
	OutputTokens     int
	Preemptions      int
	Reason           string // finished_reason: stop, length, abort or error
	Adapter          string // LoRA adapter, "" without LoRA
	// ClientAborted: the client disconnected (Reason "abort"). vLLM records
	// no finished-request metric for it: no request_success, no e2e, queue
	// or inference time. TTFT is zero when it left before its first token.
	ClientAborted bool
	// Priority is the request's priority (0 unless the engine's
	// PriorityMix drew another); vLLM's priority label buckets it.
	Priority int
}

// PriorityLabel is the priority label vLLM 0.32 writes for a request of
// priority p under --scheduling-policy priority: "<-1", "-1", "0", "1" or
// ">1".
func PriorityLabel(p int) string { return priorityClasses[priorityClass(p)] }

// EngineState is the true state of one engine at Snapshot time.
type EngineState struct {
	Instance   int
	Engine     int // data-parallel rank
	Model      string
	Generation Generation
	Addr       string // the instance's host:port, once started

	Waiting, Running            int
	KVBlocksUsed, KVBlocksTotal int
	ArrivalRate                 float64 // current mean arrivals per second (profile, skew and hot factor applied)

	Arrivals int64 // requests admitted to the queue
	Rejected int64 // arrivals whose client left at once because the queue was full (no metric shows them)
	// AdmissionRejected counts arrivals refused by --max-num-queued-reqs
	// (key "max_num_queued_reqs") or --max-num-queued-tokens
	// ("max_num_queued_tokens"), as admission_rejections_total shows them.
	AdmissionRejected map[string]int64
	Completed         int64 // requests finished (any reason, client aborts included)
	Aborted           int64 // requests whose client disconnected (part of Completed; no finished metric shows them)
	Preemptions       int64 // cumulative preemption events, at their true instants
	// PreemptionsReported is what num_preemptions_total shows: V1 counts a
	// preemption with the victim's next output, so this lags Preemptions
	// and misses victims whose client aborted first.
	PreemptionsReported int64
	// SleepLevel: 0 awake, 1 weights offloaded, 2 discard all.
	SleepLevel int
	// Wedged: the engine runs no steps (EngineParams.WedgeAfter,
	// Fleet.Wedge); WedgedAt is the true simulated instant it wedged.
	Wedged   bool
	WedgedAt time.Duration

	PromptTokens, GenerationTokens int64

	// TotalWait sums Wait over completed requests; TotalWait/Completed is
	// the mean time a request spends waiting.
	TotalWait time.Duration
	// WaitingIntegral and RunningIntegral are ∫ queue length dt over
	// simulated time, in request·seconds; divided by the elapsed simulated
	// time they are the time-average lengths.
	WaitingIntegral, RunningIntegral float64
	Busy                             time.Duration // simulated time spent executing steps

	// FinishedByReason counts requests by the finished_reason that
	// request_success_total shows them with (client aborts, which reach no
	// finished metric, are not here).
	FinishedByReason map[string]int64

	// Prefix cache, in tokens, as prefix_cache_queries_total and
	// prefix_cache_hits_total show them; the external ones are the KV
	// connector's (external_prefix_cache_*_total): on a decode instance,
	// prompt tokens not found locally, and those pulled over NIXL.
	PrefixQueries, PrefixHits                 int64
	ExternalPrefixQueries, ExternalPrefixHits int64

	// Speculative decoding (vllm:spec_decode_*): drafts verified, draft
	// tokens, accepted tokens, and accepted tokens per draft position.
	SpecDrafts, SpecDraftTokens, SpecAcceptedTokens int64
	SpecAcceptedPerPos                              []int64

	// LoRA: the adapters of running and of waiting requests (sorted,
	// distinct) and max_loras; nil and 0 without LoRA.
	LoRARunning, LoRAWaiting []string
	MaxLoRAs                 int

	// Disaggregation: the instance's role and its NIXL totals. KVTransfers
	// counts transfers that delivered (nixl_xfer_time_seconds_count),
	// KVTransferFailures those that failed (nixl_num_failed_transfers_total),
	// KVBytes the bytes delivered (nixl_bytes_transferred_sum);
	// KVNotificationFailures and KVExpired are
	// nixl_num_failed_notifications_total and nixl_num_kv_expired_reqs_total.
	Role                                       string
	KVTransfers, KVTransferFailures            int64
	KVNotificationFailures, KVExpired, KVBytes int64
	KVTransferring                             int // requests pulling KV now (part of Waiting)

	// KV offloading (offload.go): cached prompt tokens by tier, as
	// prompt_tokens_cached_by_source_total shows them on a 0.32 instance
	// without a role (keys device and host; only non-zero tiers, nil
	// before any; counted for every V1 engine); the tier's completed
	// transfers (kv_offload_{load,store}_{bytes,time}_total, the times in
	// seconds), its failed store allocations
	// (kv_offload_allocation_failure_total), its size and fill in blocks,
	// and the shared-prefix blocks the GPU prefix cache evicted.
	CachedBySource                          map[string]int64
	OffloadLoadBytes, OffloadStoreBytes     int64
	OffloadLoadSeconds, OffloadStoreSeconds float64
	OffloadAllocationFailures               int64
	OffloadCPUBlocks, OffloadCPUBlocksUsed  int
	GPUPrefixEvictions                      int64
}

// Snapshot is the state of every engine, in fleet order (instances in
// config order, ranks ascending).
type Snapshot struct {
	SimTime time.Duration
	Time    time.Time
	Engines []EngineState
}

// state reads the engine's state; the caller holds e.mu.
func (e *engine) state() EngineState {
	s := EngineState{
		Instance: e.instance, Engine: e.rank, Model: e.model, Generation: e.gen,
		Waiting: e.numWaiting(), Running: len(e.running),
		KVBlocksUsed: e.usedBlocks(), KVBlocksTotal: e.p.NumGPUBlocks,
		ArrivalRate: e.rate * e.profile.factor(e.now),
		Arrivals:    e.st.arrivals, Rejected: e.st.rejected, Completed: e.st.completed, Aborted: e.st.aborted,
		Preemptions: e.st.truePreemptions, PreemptionsReported: e.st.preemptions, SleepLevel: e.sleepLevel,
		PromptTokens: e.st.promptTokens, GenerationTokens: e.st.generationTokens,
		TotalWait: e.st.totalWait, WaitingIntegral: e.st.waitingArea.seconds(),
		RunningIntegral: e.st.runningArea.seconds(), Busy: e.st.busy,
		Wedged: e.wedged,
	}
	if e.wedged {
		s.WedgedAt = e.wedgeAt
	}
	e.featureState(&s)
	return s
}

// featureState fills the truth of finish reasons, prefix caches,
// speculative decoding, LoRA and disaggregation.
func (e *engine) featureState(s *EngineState) {
	s.AdmissionRejected = map[string]int64{}
	for r, n := range e.st.admissionRejected {
		s.AdmissionRejected[admissionReasons[r]] = n
	}
	s.FinishedByReason = map[string]int64{}
	for r, n := range e.st.success {
		if n > 0 {
			s.FinishedByReason[reasonNames[r]] = n
		}
	}
	s.PrefixQueries, s.PrefixHits = e.st.prefixQueries, e.st.prefixHits
	s.ExternalPrefixQueries, s.ExternalPrefixHits = e.kv.extQueries, e.kv.extHits
	s.SpecDrafts, s.SpecDraftTokens, s.SpecAcceptedTokens = e.spec.drafts, e.spec.draftTokens, e.spec.accepted
	s.SpecAcceptedPerPos = slices.Clone(e.spec.perPos)
	if e.lora.on {
		s.LoRARunning, s.LoRAWaiting, s.MaxLoRAs = e.lora.runningNames(), e.waitingNames(), e.lora.max
	}
	s.Role = e.kv.role
	s.KVTransfers, s.KVTransferFailures, s.KVBytes = e.kv.transfers, e.kv.failures, e.kv.bytes
	s.KVNotificationFailures, s.KVExpired = e.kv.notifFailures, e.kv.expired
	s.KVTransferring = len(e.kv.xfers)
	e.offloadState(s)
}

// offloadState fills the truth of the offload tier.
func (e *engine) offloadState(s *EngineState) {
	for src, n := range e.off.bySource {
		if n > 0 {
			if s.CachedBySource == nil {
				s.CachedBySource = map[string]int64{}
			}
			s.CachedBySource[cacheSourceNames[src]] = n
		}
	}
	o := &e.off
	s.OffloadLoadBytes, s.OffloadStoreBytes = o.loadBytes, o.storeBytes
	s.OffloadLoadSeconds, s.OffloadStoreSeconds = seconds(o.loadTime), seconds(o.storeTime)
	s.OffloadAllocationFailures = o.failures
	s.OffloadCPUBlocks, s.OffloadCPUBlocksUsed = o.capacity, len(o.cpu)
	s.GPUPrefixEvictions = o.gpuEvictions
}
