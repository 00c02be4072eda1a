package vllm

// The capacity type's PromQL and its arithmetic: per server and step, what
// finished, what queued and how fast tokens came out, from which the
// demand on each group, the throughput one replica sustains and the
// closed-form replica count are read.

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// Capacity signal names (SignalTagLabel values), one series per server.
const (
	CapFinished   = "finished"       // finished requests/s (every finished_reason)
	CapWaiting    = "waiting"        // requests waiting now
	CapWaitingMin = "waiting_min"    // the fewest waiting over the rate window: > 0 means queued throughout
	CapRunning    = "running"        // requests running now
	CapRunningAvg = "running_avg"    // mean running over the rate window
	CapRunningSq  = "running_sq_avg" // mean of running² over the rate window, at the scrape's resolution
	CapPromptTPS  = "prompt_tps"     // prompt tokens/s
	CapGenTPS     = "generation_tps" // generated tokens/s
	CapITL        = "itl_mean"       // mean inter-token latency over the window (one decode step)
	CapPrefill    = "prefill_mean"   // mean prefill time of the requests finished in the window
	CapPromptMean = "prompt_mean"    // mean prompt length of the requests finished in the window
	CapSteps      = "steps"          // engine steps/s (iteration_tokens_total's observations)
	CapIterTokens = "iteration_tps"  // tokens/s the steps computed (prefill and generated)
)

// CapacitySignals are the capacity query's range expressions: every
// signal per server (the grouping's labels kept beside the server's), so
// Go can tell saturated steps apart and count replicas. scrape is the
// resolution of the one subquery: the mean of running² (a window's mean
// inter-token latency weighs each step by the tokens it emitted, so the
// batch size it sees is E[running²]/E[running], not E[running]).
func (b Builder) CapacitySignals(g models.Grouping, f models.Filters, window string, scrape time.Duration) []SignalExpr {
	gl := b.capacityLabels(g)
	sum := func(expr string) string { return agg("sum", gl, expr) }
	mean := func(key SignalKey) string {
		return sum(b.rateUnion(key, f, "_sum", window)) + " / " + sum(b.rateUnion(key, f, "_count", window))
	}
	return []SignalExpr{
		{CapFinished, sum(b.rateUnion(RequestSuccess, f, "", window))},
		{CapWaiting, sum(b.union(Waiting, f, ""))},
		{CapWaitingMin, sum(b.fnUnion("min_over_time", Waiting, f, window))},
		{CapRunning, sum(b.union(Running, f, ""))},
		{CapRunningAvg, sum(b.fnUnion("avg_over_time", Running, f, window))},
		{CapRunningSq, sum(fmt.Sprintf("avg_over_time((%s ^ 2)[%s:%s])", b.union(Running, f, ""), window, model.Duration(scrape)))},
		{CapPromptTPS, sum(b.rateUnion(PromptTokens, f, "", window))},
		{CapGenTPS, sum(b.rateUnion(GenerationTokens, f, "", window))},
		{CapITL, mean(ITL)},
		{CapPrefill, mean(PrefillTime)},
		{CapPromptMean, mean(RequestPromptTokens)},
		{CapSteps, sum(b.rateUnion(IterationTokens, f, "_count", window))},
		{CapIterTokens, sum(b.rateUnion(IterationTokens, f, "_sum", window))},
	}
}

// capacityLabels are the grouping's labels and the server's identity.
func (b Builder) capacityLabels(g models.Grouping) []string {
	out := append([]string(nil), b.GroupLabels(g)...)
	for _, l := range b.IdentityLabels() {
		if !contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// CapacityLengthExprs are the prompt and output length histograms of the
// requests finished over the range (instant expressions at its end), per
// group and bucket, and each family's exact mean (its _sum over its
// _count): the twin draws its requests from the buckets, scaled to the
// means.
type CapacityLengthExprs struct {
	PromptBuckets, OutputBuckets, PromptMean, OutputMean string
}

// CapacityLengths are the length expressions of a capacity what-if.
func (b Builder) CapacityLengths(g models.Grouping, f models.Filters, rng time.Duration) CapacityLengthExprs {
	gl := b.GroupLabels(g)
	buckets := func(key SignalKey) string {
		return agg("sum", append([]string{"le"}, gl...), b.increaseUnion(key, f, "_bucket", rng))
	}
	mean := func(key SignalKey) string {
		return agg("sum", gl, b.increaseUnion(key, f, "_sum", rng)) + " / " + agg("sum", gl, b.increaseUnion(key, f, "_count", rng))
	}
	return CapacityLengthExprs{PromptBuckets: buckets(RequestPromptTokens), OutputBuckets: buckets(RequestGenerationTokens),
		PromptMean: mean(RequestPromptTokens), OutputMean: mean(RequestGenerationTokens)}
}

// CapacityHitRate is each group's prefix-cache hit rate over the range
// (an instant expression at its end): the twin serves that share of every
// prompt from its cache.
func (b Builder) CapacityHitRate(g models.Grouping, f models.Filters, rng time.Duration) string {
	gl := b.GroupLabels(g)
	return agg("sum", gl, b.increaseUnion(PrefixHits, f, "", rng)) + " / " + agg("sum", gl, b.increaseUnion(PrefixQueries, f, "", rng))
}

// CapacityWait is the objective's wait's p99 over the whole range per
// group (an instant expression at its end): the measured value the
// what-if's prediction for today's replica count is shown beside.
func (b Builder) CapacityWait(wait string, g models.Grouping, f models.Filters, rng time.Duration) string {
	key := QueueTime
	if wait == models.CapacityTTFT {
		key = TTFT
	}
	return fmt.Sprintf("histogram_quantile(0.99, %s)",
		agg("sum", append([]string{"le"}, b.GroupLabels(g)...), b.increaseUnion(key, f, "_bucket", rng)))
}

// CapacityCacheConfig is every server's cache_config_info (it has no
// model_name: servers are matched to groups by their identity).
func (b Builder) CapacityCacheConfig(f models.Filters) string {
	own := models.Filters{Instances: f.Instances, Labels: f.Labels}
	return agg("max", append(b.IdentityLabels(), "num_gpu_blocks", "block_size"), b.union(CacheConfigInfo, own, ""))
}

// CapacityServer is one server's history in a capacity answer: its
// signals (the Cap* names) at each step, NaN where a signal has no
// sample.
type CapacityServer struct {
	Name    string
	Signals map[string][]float64
}

// CapacityGroup is one group's servers over the answer's steps.
type CapacityGroup struct {
	Labels  map[string]string
	Times   []time.Time
	Servers []CapacityServer
}

// CapacityGroups sorts the answer of CapacitySignals into groups (by
// groupLabels) of servers (named by instanceOf), every signal aligned on
// the answer's steps. Groups and servers come sorted by name.
func CapacityGroups(m series.Matrix, groupLabels []string, instanceOf func(map[string]string) string) []CapacityGroup {
	times, index := stepIndex(m)
	groups := map[string]*CapacityGroup{}
	servers := map[string]map[string]*CapacityServer{}
	for _, s := range m {
		gk := labelKey(s.Labels, groupLabels)
		if groups[gk] == nil {
			groups[gk] = &CapacityGroup{Labels: pickLabels(s.Labels, groupLabels), Times: times}
			servers[gk] = map[string]*CapacityServer{}
		}
		name := instanceOf(s.Labels)
		srv := servers[gk][name]
		if srv == nil {
			srv = &CapacityServer{Name: name, Signals: map[string][]float64{}}
			servers[gk][name] = srv
		}
		vals := nanSlice(len(times))
		for i, t := range s.Times {
			vals[index[t.UnixMilli()]] = s.Values[i]
		}
		srv.Signals[s.Labels[SignalTagLabel]] = vals
	}
	out := make([]CapacityGroup, 0, len(groups))
	for gk, g := range groups {
		for _, srv := range servers[gk] {
			g.Servers = append(g.Servers, *srv)
		}
		sort.Slice(g.Servers, func(i, j int) bool { return g.Servers[i].Name < g.Servers[j].Name })
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		return labelKey(out[i].Labels, groupLabels) < labelKey(out[j].Labels, groupLabels)
	})
	return out
}

// stepIndex is every step time in m, sorted, and each one's position.
func stepIndex(m series.Matrix) ([]time.Time, map[int64]int) {
	seen := map[int64]bool{}
	var ms []int64
	for _, s := range m {
		for _, t := range s.Times {
			if k := t.UnixMilli(); !seen[k] {
				seen[k] = true
				ms = append(ms, k)
			}
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	times, index := make([]time.Time, len(ms)), make(map[int64]int, len(ms))
	for i, k := range ms {
		times[i], index[k] = time.UnixMilli(k).UTC(), i
	}
	return times, index
}

func labelKey(ls map[string]string, names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(ls[n] + "\x00")
	}
	return b.String()
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// MinSaturatedSteps is how many steps with requests queued throughout
// the window the history must hold before their mean is the sustainable
// throughput; fewer, and the most a server ever finished stands in as a
// lower bound.
const MinSaturatedSteps = 5

// CapacityEstimate is what a group's history says about its capacity.
type CapacityEstimate struct {
	// Replicas are the servers answering at the range's end that are not
	// stalled (work queued or running and nothing coming out); Stalled
	// names those left out.
	Replicas int
	Stalled  []string
	// Arrivals is the mean demand in requests/s over the range: finished
	// requests plus the change in queued and running ones, so a growing
	// queue counts. ArrivalsNow is it at the last step; PeakToMean is the
	// highest step's over the mean (1: steady). Arrival is it per step.
	Arrivals, ArrivalsNow, PeakToMean float64
	Arrival                           []float64
	// PromptTPS and GenerationTPS are mean tokens/s over the range.
	PromptTPS, GenerationTPS float64
	// Waiting is the requests queued at the range's end.
	Waiting float64
	// PerReplica and PerReplicaTokens are what one server sustains:
	// finished requests/s and generated tokens/s, the mean over the steps
	// where a server had requests queued throughout the window
	// (SaturatedSteps of them). With fewer than MinSaturatedSteps,
	// LowerBound is set and they are the most a server ever did.
	PerReplica, PerReplicaTokens float64
	SaturatedSteps               int
	LowerBound                   bool
	// ServerSeconds is the time the group's servers answered over the
	// range (answering server-steps × step); IdleShare the share of it with
	// nothing running and nothing waiting; GeneratedTokens the tokens they
	// generated in it.
	ServerSeconds, IdleShare, GeneratedTokens float64
}

// EstimateCapacity reads a group's demand and supply; step is the
// answer's step (the queue's change per step is divided by it).
func EstimateCapacity(g CapacityGroup, step time.Duration) CapacityEstimate {
	var e CapacityEstimate
	last := len(g.Times) - 1
	if last < 0 {
		return e
	}
	e.Arrival = arrivals(g, step)
	e.Arrivals, e.PeakToMean = meanAndPeak(e.Arrival)
	e.ArrivalsNow = e.Arrival[last]
	for _, srv := range g.Servers {
		e.PromptTPS += mean(srv.Signals[CapPromptTPS])
		e.GenerationTPS += mean(srv.Signals[CapGenTPS])
		w := at(srv.Signals[CapWaiting], last)
		if math.IsNaN(w) {
			continue // not answering at the end: not a replica now
		}
		e.Waiting += w
		if stalledAt(srv, last) {
			e.Stalled = append(e.Stalled, srv.Name)
			continue
		}
		e.Replicas++
	}
	e.ServerSeconds, e.IdleShare, e.GeneratedTokens = usage(g.Servers, step)
	e.PerReplica, e.PerReplicaTokens, e.SaturatedSteps = saturatedThroughput(g.Servers)
	if e.SaturatedSteps < MinSaturatedSteps {
		e.LowerBound = true
		e.PerReplica, e.PerReplicaTokens = mostFinished(g.Servers)
	}
	return e
}

// usage is the servers' answering time, the share of it idle (no request
// running over the window and none waiting) and the tokens generated.
func usage(servers []CapacityServer, step time.Duration) (seconds, idle, tokens float64) {
	var answering, idleSteps int
	for _, srv := range servers {
		for i, w := range srv.Signals[CapWaiting] {
			if math.IsNaN(w) {
				continue
			}
			answering++
			if w == 0 && zeroNaN(at(srv.Signals[CapRunningAvg], i)) == 0 {
				idleSteps++
			}
			tokens += zeroNaN(at(srv.Signals[CapGenTPS], i)) * step.Seconds()
		}
	}
	if answering == 0 {
		return 0, 0, tokens
	}
	return float64(answering) * step.Seconds(), float64(idleSteps) / float64(answering), tokens
}

// arrivals is the group's demand at each step: what finished plus the
// growth of what is queued and running since the step before.
func arrivals(g CapacityGroup, step time.Duration) []float64 {
	out := make([]float64, len(g.Times))
	prevQ := math.NaN()
	for i := range g.Times {
		fin, q := 0.0, 0.0
		for _, srv := range g.Servers {
			fin += zeroNaN(at(srv.Signals[CapFinished], i))
			q += zeroNaN(at(srv.Signals[CapWaiting], i)) + zeroNaN(at(srv.Signals[CapRunning], i))
		}
		out[i] = fin
		if !math.IsNaN(prevQ) && step > 0 {
			out[i] = math.Max(0, fin+(q-prevQ)/step.Seconds())
		}
		prevQ = q
	}
	return out
}

// stalledAt: work queued or running, yet no token and no request came out
// over the window ending at step i.
func stalledAt(srv CapacityServer, i int) bool {
	work := zeroNaN(at(srv.Signals[CapWaiting], i)) + zeroNaN(at(srv.Signals[CapRunning], i))
	out := zeroNaN(at(srv.Signals[CapGenTPS], i)) + zeroNaN(at(srv.Signals[CapFinished], i))
	return work > 0 && out == 0
}

// saturatedThroughput is the mean finished requests/s and tokens/s over
// the server-steps whose window had requests queued throughout.
func saturatedThroughput(servers []CapacityServer) (reqs, tokens float64, n int) {
	for _, srv := range servers {
		for i, wmin := range srv.Signals[CapWaitingMin] {
			fin := at(srv.Signals[CapFinished], i)
			if math.IsNaN(wmin) || wmin <= 0 || math.IsNaN(fin) {
				continue
			}
			reqs += fin
			tokens += zeroNaN(at(srv.Signals[CapGenTPS], i))
			n++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	return reqs / float64(n), tokens / float64(n), n
}

// mostFinished is the most any server finished in a step, and its tokens
// then: a lower bound of what one replica sustains.
func mostFinished(servers []CapacityServer) (reqs, tokens float64) {
	for _, srv := range servers {
		for i, fin := range srv.Signals[CapFinished] {
			if !math.IsNaN(fin) && fin > reqs {
				reqs, tokens = fin, zeroNaN(at(srv.Signals[CapGenTPS], i))
			}
		}
	}
	return reqs, tokens
}

// DesiredReplicas is the closed form an autoscaler can evaluate: the
// arrival rate plus the standing queue worked off over drain, with
// headroom on top, over what one replica sustains, rounded up. 0 when
// nothing is known of a replica's throughput.
func DesiredReplicas(arrivals, waiting, perReplica, headroom float64, drain time.Duration) int {
	if perReplica <= 0 || math.IsNaN(perReplica) {
		return 0
	}
	load := arrivals
	if drain > 0 {
		load += waiting / drain.Seconds()
	}
	return int(math.Ceil(load * (1 + headroom) / perReplica))
}

func at(vals []float64, i int) float64 {
	if i < 0 || i >= len(vals) {
		return math.NaN()
	}
	return vals[i]
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// mean is the mean of the values that are numbers (0 when none are).
func mean(vals []float64) float64 {
	m, _ := meanAndPeak(vals)
	return m
}

// meanAndPeak is the mean of the values that are numbers and the highest
// over it (1 when the mean is 0).
func meanAndPeak(vals []float64) (float64, float64) {
	sum, peak, n := 0.0, 0.0, 0
	for _, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		sum += v
		peak = math.Max(peak, v)
		n++
	}
	if n == 0 || sum == 0 {
		return 0, 1
	}
	m := sum / float64(n)
	return m, peak / m
}

// CapacityLowerBoundText explains a per-replica figure read from too few
// saturated steps.
func CapacityLowerBoundText(group string, saturated int) string {
	return fmt.Sprintf("%s: only %d steps in the range had a server with requests queued throughout its rate window (%d needed), so what one replica sustains is not measured: its figure is the most a server finished in one step, a lower bound, and the replicas from it an upper bound. A range that includes a busy period measures it.",
		group, saturated, MinSaturatedSteps)
}

// CapacityDemand is each group's demand (requests/s arriving) per step,
// tagged "arrivals" and labelled with the group's labels, for frames.
func CapacityDemand(groups []CapacityGroup, step time.Duration) series.Matrix {
	var out series.Matrix
	for _, g := range groups {
		ls := make(map[string]string, len(g.Labels)+1)
		for k, v := range g.Labels {
			ls[k] = v
		}
		ls[SignalTagLabel] = "arrivals"
		out = append(out, &series.Series{Labels: ls, Times: g.Times, Values: arrivals(g, step)})
	}
	return out
}

// CapacityCount is one count of a group's decision (replicas_now,
// replicas_needed, desired_replicas) as a series of one sample at the
// range's end, so an alert rule can compare them (needed > now).
func CapacityCount(g CapacityGroup, signal string, v float64) *series.Series {
	ls := make(map[string]string, len(g.Labels)+1)
	for k, val := range g.Labels {
		ls[k] = val
	}
	ls[SignalTagLabel] = signal
	var at []time.Time
	if n := len(g.Times); n > 0 {
		at = []time.Time{g.Times[n-1]}
	}
	return &series.Series{Labels: ls, Times: at, Values: []float64{v}[:len(at)]}
}
