package models

// allGroupings are the groupings, from coarse to fine.
var allGroupings = []Grouping{GroupNone, GroupModel, GroupInstance, GroupInstanceEngine, GroupRole}

// quantiles is the quantiles option of waitTime and kvTransfer: p0 and
// p100 are not quantiles a histogram can give, so both ends are open.
var quantiles = Option{Field: "quantiles", Kind: KindNumbers, Default: []float64{0.5, 0.9, 0.99},
	Range: &Range{Min: 0, Max: 1, MinOpen: true, MaxOpen: true}}

// liveOption streams a queue or fleet panel through Grafana Live (pkg/live)
// instead of polling it.
var liveOption = Option{Field: "live", Kind: KindBoolean}

// fleetWorst keeps the fleet table's k worst rows (0: every engine), so a
// live table on a large fleet pushes what on-call reads first.
var fleetWorst = Option{Field: "worst", Kind: KindInteger, Range: &Range{Min: 0, Max: 10000}}

// schema is the table of query types (see Schema). ParseQuery and the
// editor (src/queryTypes.json, go generate ./pkg/models/) both read it.
var schema = Schema{
	Groupings:       allGroupings,
	MaxFilterValues: 500,
	NumberPattern:   `^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`,
	Types: []TypeSpec{
		// live: the panel subscribes to the data source's live channel
		// (pkg/live) and is pushed the queue every scrape interval.
		typed[QueueOptions](common(QueryQueue, append([]Option{liveOption}, priorityOptions()...)...)).worded("Queue depth",
			"Running and waiting requests"),
		typed[WaitTimeOptions](common(QueryWaitTime, append([]Option{quantiles,
			{Field: "family", Kind: KindChoice, Default: "queue_time",
				Values: []string{"queue_time", "ttft", "itl", "e2e", "prefill", "decode", "inference"}},
			{Field: "live", Kind: KindBoolean},
			{Field: "format", Kind: KindChoice, Default: WaitTimeSeries, Values: []string{WaitTimeSeries, WaitTimeHeatmap}}},
			priorityOptions()...)...)).worded("Wait time",
			"Queue / first-token latency quantiles, or their distribution as a heatmap"),
		typed[PreemptionsOptions](common(QueryPreemptions, Option{Field: "asSeries", Kind: KindBoolean},
			Option{Field: "perRequest", Kind: KindBoolean})).worded("Preemptions",
			"Requests preempted for lack of KV cache"),
		typed[TopKOptions](topkSpec).worded("Top-k",
			"The k busiest servers or engines"),
		typed[GPUOptions](gpuSpec).worded("GPU",
			"GPU memory, utilisation and power, joined to the vLLM engine on it"),
		// Always one row per engine. "both", the other diagnosis type's
		// default, is the table here.
		typed[FleetOptions](TypeSpec{Type: QueryFleet, Groupings: []Grouping{GroupInstanceEngine}, DefaultGrouping: GroupInstanceEngine,
			Options: []Option{{Field: "format", Kind: KindChoice, Values: []string{"table"}, Default: "table",
				Aliases: map[string]string{"both": "table"}}, fleetWorst, liveOption}}).worded("Fleet",
			"One row per engine: state, load, latency; worst first"),
		// A verdict per server or engine, or per role pool (prefill and
		// decode are scaled apart).
		typed[SaturationOptions](TypeSpec{Type: QuerySaturation, Groupings: []Grouping{GroupInstance, GroupInstanceEngine, GroupRole},
			DefaultGrouping: GroupInstance,
			Options:         []Option{{Field: "format", Kind: KindChoice, Values: []string{"both", "table", "series"}, Default: "both"}}}).worded("Saturation",
			"A verdict per instance (queueing, KV-bound, …) with its evidence"),
		typed[SLOOptions](sloSpec).worded("SLO",
			"Latency or availability objective: attainment, error budget, burn rates"),
		typed[HostOptions](perServer(QueryHost, "host series are one per vLLM instance")).worded("Host",
			"CPU, memory, network and disk of the host under each instance"),
		typed[ContainerOptions](perServer(QueryContainer, "container series are one per vLLM server and container",
			Option{Field: "format", Kind: KindChoice, Values: []string{"series", "table"}, Default: "series"})).worded("Container",
			"cAdvisor: CPU and memory against their limits, CPU throttling, OOM events, restarts, network and disk I/O"),
		typed[PrefixCacheOptions](common(QueryPrefixCache)).worded("Prefix cache",
			"Prefix-cache hit rate (local and KV connector) and prompt tokens/s by source"),
		typed[SpecDecodeOptions](common(QuerySpecDecode)).worded("Speculative decoding",
			"Draft acceptance rate, mean acceptance length, acceptance by draft position"),
		typed[LoRAOptions](perServer(QueryLoRA, "vLLM reports LoRA adapters once per server",
			Option{Field: "format", Kind: KindChoice, Values: []string{"table", "series"}, Default: "table"})).worded("LoRA adapters",
			"The LoRA adapters in use on each server, and max_loras"),
		// Split by role by default: a disaggregated fleet's first question is
		// which side, prefill or decode, is slow or failing.
		typed[KVTransferOptions](withGrouping(common(QueryKVTransfer, quantiles), GroupRole)).worded("KV transfer",
			"Prefill/decode KV-cache transfers (NIXL): time quantiles, bytes/s, failures/s"),
		typed[WorkloadOptions](common(QueryWorkload, append([]Option{{Field: "view", Kind: KindChoice, Default: WorkloadTokens,
			Values: []string{WorkloadTokens, WorkloadPrompt, WorkloadGeneration}}}, priorityOptions()...)...)).worded("Workload",
			"Prompt and output lengths (means or heatmaps), finished requests/s, error share"),
		// Sized per model by default: a model's replicas are what a deployment
		// (and an autoscaler) scales; role sizes a disaggregated fleet's pools.
		typed[CapacityOptions](capacitySpec).worded("Capacity",
			"Replicas each model needs for a queue or TTFT objective, and a what-if per replica count"),
		typed[PromQLOptions](common(QueryPromQL,
			Option{Field: "expr", Kind: KindText, Required: true, Hint: ": a promql query needs a PromQL expression"},
			Option{Field: "unit", Kind: KindText})).worded("PromQL",
			"Raw PromQL, for panels no vLLM query type covers"),
	},
}

// topkSpec ranks servers or engines, so only those groupings apply.
var topkSpec = TypeSpec{Type: QueryTopK, Groupings: []Grouping{GroupInstance, GroupInstanceEngine}, DefaultGrouping: GroupInstance,
	Options: []Option{
		{Field: "k", Kind: KindInteger, Default: 5, Range: &Range{Min: 1, Max: 100}},
		{Field: "rankBy", Kind: KindChoice, Default: "waiting",
			Values: []string{"waiting", "running", "kv_usage", "wait_p99", "preemption_rate"}},
		{Field: "aggregation", Kind: KindChoice, Default: "max", Values: []string{"max", "avg", "last"}},
		// Absent means both the series and the table; "series" is asSeries.
		{Field: "format", Kind: KindChoice, Values: []string{"table", "series", "both"}},
		{Field: "asSeries", Kind: KindBoolean},
	}}

// capacitySpec: a 1 s queue-time p99 is the default objective (no data
// source setting names one); 20% headroom is the usual allowance for
// traffic the range did not see. A threshold is a wait a user can feel
// (at most an hour); headroom over 5 (six times the demand) is a typo.
var capacitySpec = TypeSpec{Type: QueryCapacity, Groupings: []Grouping{GroupModel, GroupRole, GroupNone},
	DefaultGrouping: GroupModel,
	Options: []Option{
		{Field: "wait", Kind: KindChoice, Default: CapacityQueueTime, Values: []string{CapacityQueueTime, CapacityTTFT}},
		{Field: "threshold", Kind: KindNumber, Default: 1.0, Range: &Range{Min: 0, Max: 3600, MinOpen: true}, Hint: " seconds"},
		{Field: "headroom", Kind: KindNumber, Default: 0.2, Range: &Range{Min: 0, Max: 5}, Hint: "; write 20% as 0.2"},
		{Field: "drain", Kind: KindDuration, Default: "5m", Durations: &DurationRange{Min: "10s", Max: "1h"}},
		{Field: "format", Kind: KindChoice, Default: "both", Values: []string{"both", "table", "series", "whatif", "servers"}},
	}}

// gpuSpec reads the node agents by default ("prometheus": the agents as
// scraped, "dcgm": NVIDIA dcgm-exporter as scraped).
var gpuSpec = common(QueryGPU,
	Option{Field: "source", Kind: KindChoice, Default: "agents", Values: []string{"agents", "prometheus", "dcgm"}},
	Option{Field: "format", Kind: KindChoice, Default: "table", Values: []string{"table", "series"}})

// sloSpec: an objective is usually a model's promise, hence by model. A
// 1 s threshold is a bucket bound of every SLO family's default list, so a
// new query on an unchanged vLLM shows data at once without a snap notice.
// The threshold's limit is above every default latency bucket of vLLM
// (7680 s); a higher threshold snaps to the store's highest bound. The
// burn-rate signals are the SRE workbook's (long/short window).
var sloSpec = TypeSpec{Type: QuerySLO, Groupings: allGroupings, DefaultGrouping: GroupModel,
	Options: []Option{
		{Field: "objective", Kind: KindChoice, Default: SLOLatency, Values: []string{SLOLatency, SLOAvailability}},
		{Field: "family", Kind: KindChoice, Default: "ttft", Values: []string{"ttft", "itl", "e2e", "queue_time"}},
		{Field: "threshold", Kind: KindNumber, Default: 1.0, Range: &Range{Min: 0, Max: 1e5, MinOpen: true},
			Hint: " seconds"},
		// The default depends on the objective (SLOSpec.Objectives).
		{Field: "target", Kind: KindNumber, Range: &Range{Min: 0, Max: 1, MinOpen: true, MaxOpen: true},
			Hint: "; write 99% as 0.99"},
		{Field: "window", Kind: KindDuration, Default: "28d", Durations: &DurationRange{Min: "1h", Max: "366d"}},
		{Field: "signals", Kind: KindChoices,
			Values: []string{"attainment", "error_budget_left", "burn_1h_5m", "burn_6h_30m", "burn_1d_2h", "burn_3d_6h"}},
		priorityOptions()[0], priorityOptions()[1],
	},
	// Availability is three nines: errors are rarer than slow requests, and
	// 99% would let one request in a hundred fail.
	SLO: &SLOSpec{Objectives: []Objective{
		{Name: SLOLatency, DefaultTarget: 0.99, Fields: []string{"family", "threshold"}},
		{Name: SLOAvailability, DefaultTarget: 0.999},
	}},
}

// common is a type that takes every grouping, a series per instance by
// default.
func common(qt QueryType, opts ...Option) TypeSpec {
	return TypeSpec{Type: qt, Groupings: allGroupings, DefaultGrouping: GroupInstance, Options: opts}
}

// perServer is a type whose data vLLM reports once per server: the only
// grouping is instance, and anything else is refused rather than silently
// ignored.
func perServer(qt QueryType, reason string, opts ...Option) TypeSpec {
	return TypeSpec{Type: qt, Groupings: []Grouping{GroupInstance}, DefaultGrouping: GroupInstance,
		GroupingReason: reason, Options: opts}
}

func withGrouping(s TypeSpec, g Grouping) TypeSpec {
	s.DefaultGrouping = g
	return s
}

// Views of the table for Go callers and tests; each is a lookup, never a
// second copy.
var (
	// QueryTypes lists every query type in the order the editor shows them.
	QueryTypes = typeNames()
	// MaxFilterValues keeps one selector from growing without bound.
	MaxFilterValues = schema.MaxFilterValues
	// DefaultQuantiles are the waitTime and kvTransfer quantiles when none are given.
	DefaultQuantiles = option(QueryWaitTime, "quantiles").Default.([]float64)
	// Families are the latency histograms waitTime can read.
	Families = option(QueryWaitTime, "family").Values
	// DefaultK and MaxK: topk keeps DefaultK when k is absent, at most MaxK.
	DefaultK = option(QueryTopK, "k").Default.(int)
	MaxK     = int(option(QueryTopK, "k").Range.Max)
	// RankSignals are what topk can rank by.
	RankSignals = option(QueryTopK, "rankBy").Values
	// Aggregations are how topk folds a signal over the range.
	Aggregations = option(QueryTopK, "aggregation").Values
	// DiagnosisFormats are what saturation can return: "table" only the
	// table, "series" only the series, "both" (default).
	DiagnosisFormats = option(QuerySaturation, "format").Values
	// LoRAFormats are what a lora query returns: "table" (default), one row
	// per instance with its adapters now, or "series", the running and
	// waiting adapter counts per instance over time.
	LoRAFormats = option(QueryLoRA, "format").Values
	// WorkloadViews are the workload query's views, the default first.
	WorkloadViews = option(QueryWorkload, "view").Values
)

// The slo type's views of the table.
var (
	// SLOObjectives are the objective kinds, the default first.
	SLOObjectives = option(QuerySLO, "objective").Values
	// SLOFamilies are the latency histograms an objective can be set on.
	SLOFamilies = option(QuerySLO, "family").Values
	// SLOSignals are the series an slo query can return, in order.
	SLOSignals          = option(QuerySLO, "signals").Values
	DefaultSLOFamily    = option(QuerySLO, "family").defaultString()
	DefaultSLOThreshold = option(QuerySLO, "threshold").defaultFloat()
	DefaultSLOTarget    = objectiveTarget(SLOLatency)
	// DefaultAvailabilityTarget is an availability objective's default target.
	DefaultAvailabilityTarget = objectiveTarget(SLOAvailability)
	DefaultSLOWindow          = option(QuerySLO, "window").defaultString()
	MaxSLOThreshold           = option(QuerySLO, "threshold").Range.Max
	MinSLOWindow              = mustDuration(option(QuerySLO, "window").Durations.Min)
	MaxSLOWindow              = mustDuration(option(QuerySLO, "window").Durations.Max)
)

func typeNames() []QueryType {
	out := make([]QueryType, len(schema.Types))
	for i, t := range schema.Types {
		out[i] = t.Type
	}
	return out
}

func objectiveTarget(name string) float64 {
	o, _ := mustSpec(QuerySLO).SLO.Objective(name)
	return o.DefaultTarget
}
