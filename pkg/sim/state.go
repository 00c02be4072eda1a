package sim

import (
	"time"
)

// PreemptionEvent is one recompute preemption, as the engine saw it.
type PreemptionEvent struct {
	SimTime   time.Duration // simulated time since the fleet's start
	Time      time.Time     // the wall time SimTime maps to (see Fleet.WallTime)
	Instance  int           // index in Config.Instances
	Engine    int           // data-parallel rank: the engine label ("0" for V0 instances, which have none)
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
	Reason           string // finished_reason: stop, length or abort
}

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

	Arrivals    int64 // requests admitted to the queue
	Rejected    int64 // arrivals aborted at once because the queue was full
	Completed   int64 // requests finished (any reason)
	Preemptions int64 // cumulative preemption events

	PromptTokens, GenerationTokens int64

	// TotalWait sums Wait over completed requests; TotalWait/Completed is
	// the mean time a request spends waiting.
	TotalWait time.Duration
	// WaitingIntegral and RunningIntegral are ∫ queue length dt over
	// simulated time, in request·seconds; divided by the elapsed simulated
	// time they are the time-average lengths.
	WaitingIntegral, RunningIntegral float64
	Busy                             time.Duration // simulated time spent executing steps
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
	return EngineState{
		Instance: e.instance, Engine: e.rank, Model: e.model, Generation: e.gen,
		Waiting: e.waiting.len(), Running: len(e.running),
		KVBlocksUsed: e.usedBlocks(), KVBlocksTotal: e.p.NumGPUBlocks,
		ArrivalRate: e.rate * e.profile.factor(e.now),
		Arrivals:    e.st.arrivals, Rejected: e.st.rejected, Completed: e.st.completed,
		Preemptions: e.st.preemptions, PromptTokens: e.st.promptTokens, GenerationTokens: e.st.generationTokens,
		TotalWait: e.st.totalWait, WaitingIntegral: e.st.waitingArea.seconds(),
		RunningIntegral: e.st.runningArea.seconds(), Busy: e.st.busy,
	}
}
