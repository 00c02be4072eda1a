package frames

import (
	"math"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// CapacityRow is one group (a model, a role pool, or the fleet) of a
// capacity answer. Nil pointers are unknown values (null cells).
type CapacityRow struct {
	// Group is the group's name per column (model, role), in Columns order.
	Group []string
	// Server names the server of a per-server row (CapacityServerTable).
	Server string
	// ReplicasNow serve the group; Needed meets the objective (nil when the
	// what-if could not tell); Desired is the closed form an autoscaler
	// rule computes (nil when a replica's throughput is unknown).
	ReplicasNow      int64
	Needed, Desired  *int64
	Arrivals         float64 // requests/s, mean over the range
	ArrivalsNow      float64 // requests/s at the range's end
	PeakToMean       float64
	PromptTPS        float64
	GenerationTPS    float64
	Waiting          float64
	PerReplica       float64 // finished requests/s one replica sustains
	PerReplicaTokens float64 // generated tokens/s one replica sustains
	SaturatedSteps   int64
	LowerBound       bool
	// MeasuredP99 is the objective's p99 over the range; PredictedNow and
	// PredictedNeeded are the what-if's at ReplicasNow and Needed.
	MeasuredP99, PredictedNow, PredictedNeeded *float64
	// Efficiency over the range: GPUs per server, GPU-seconds per million
	// generated tokens, the share of server time idle, tokens/s per GPU;
	// with a GPU price, the cost per million tokens and of the idle time.
	GPUsPerServer                                 int64
	GPUSecondsPerMTokens, IdleShare, TokensPerGPU *float64
	CostPerMTokens, IdleCost                      *float64
	// StackDesired and StackCurrent are the stack's own autoscaler's
	// replicas for the group (llm-d's workload variant autoscaler), nil
	// where it sizes none of the group's servers. The table has their
	// columns only when some row has them.
	StackDesired, StackCurrent *float64
	// EnergyPerMTokens is the kWh the group's GPUs drew per million
	// generated tokens, where the node agents report their power; the table
	// has its column only when some row has it.
	EnergyPerMTokens *float64
}

// CapacityOptions name the table's group columns and what it carries.
type CapacityOptions struct {
	Columns []string
	// Objective names the p99 columns ("queue_time", "ttft").
	Objective string
	Executed  string
	Notices   []data.Notice
}

// CapacityTable is the capacity query's table: one row per group with
// its replicas now, needed and desired, its demand, what one replica
// sustains and the objective's p99 measured and predicted.
func CapacityTable(rows []CapacityRow, o CapacityOptions) *data.Frame {
	fields := groupColumns(o.Columns, len(rows), func(i int) []string { return rows[i].Group })
	fields = append(fields, capacityFields(rows, o.Objective)...)
	fields = append(fields, efficiencyFields(rows)...)
	fields = append(fields, energyField(rows)...)
	fields = append(fields, stackFields(rows)...)
	f := data.NewFrame("capacity", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: o.Executed, Notices: o.Notices})
	return f
}

// capacityFields are the table's value columns, in order.
func capacityFields(rows []CapacityRow, objective string) []*data.Field {
	col := func(name, unit string, get func(CapacityRow) *float64) *data.Field {
		return floatColumn(rows, name, unit, get)
	}
	ints := func(name string, get func(CapacityRow) *int64) *data.Field {
		vals := make([]*int64, len(rows))
		for i, r := range rows {
			vals[i] = get(r)
		}
		return data.NewField(name, nil, vals)
	}
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	bound := make([]bool, len(rows))
	for i, r := range rows {
		bound[i] = r.LowerBound
	}
	return []*data.Field{
		ints("replicas now", func(r CapacityRow) *int64 { v := r.ReplicasNow; return &v }),
		ints("replicas needed", func(r CapacityRow) *int64 { return r.Needed }),
		ints("desired replicas", func(r CapacityRow) *int64 { return r.Desired }),
		col("arrivals", "reqps", func(r CapacityRow) *float64 { return num(r.Arrivals) }),
		col("arrivals now", "reqps", func(r CapacityRow) *float64 { return num(r.ArrivalsNow) }),
		col("peak to mean", "none", func(r CapacityRow) *float64 { return num(r.PeakToMean) }),
		col("prompt tokens/s", "short", func(r CapacityRow) *float64 { return num(r.PromptTPS) }),
		col("generated tokens/s", "short", func(r CapacityRow) *float64 { return num(r.GenerationTPS) }),
		col("waiting", "short", func(r CapacityRow) *float64 { return num(r.Waiting) }),
		col("per replica", "reqps", func(r CapacityRow) *float64 { return num(r.PerReplica) }),
		col("per replica tokens/s", "short", func(r CapacityRow) *float64 { return num(r.PerReplicaTokens) }),
		ints("saturated steps", func(r CapacityRow) *int64 { v := r.SaturatedSteps; return &v }),
		data.NewField("per replica is a lower bound", nil, bound),
		col(objective+" p99 measured", "s", func(r CapacityRow) *float64 { return r.MeasuredP99 }),
		col(objective+" p99 predicted now", "s", func(r CapacityRow) *float64 { return r.PredictedNow }),
		col(objective+" p99 predicted needed", "s", func(r CapacityRow) *float64 { return r.PredictedNeeded }),
		ints("GPUs per server", func(r CapacityRow) *int64 { v := r.GPUsPerServer; return &v }),
	}
}

// efficiencyFields are the GPU time, idle share and price columns.
func efficiencyFields(rows []CapacityRow) []*data.Field {
	col := func(name, unit string, get func(CapacityRow) *float64) *data.Field {
		return floatColumn(rows, name, unit, get)
	}
	return []*data.Field{
		col("GPU-s per M tokens", "s", func(r CapacityRow) *float64 { return r.GPUSecondsPerMTokens }),
		col("idle share", "percentunit", func(r CapacityRow) *float64 { return r.IdleShare }),
		col("tokens/s per GPU", "short", func(r CapacityRow) *float64 { return r.TokensPerGPU }),
		col("cost per M tokens", "none", func(r CapacityRow) *float64 { return r.CostPerMTokens }),
		col("idle cost", "none", func(r CapacityRow) *float64 { return r.IdleCost }),
	}
}

// CapacityServerTable is the efficiency columns per server: its group,
// its GPUs, what it generated and at what GPU time, idle share and price.
func CapacityServerTable(rows []CapacityRow, o CapacityOptions) *data.Frame {
	fields := groupColumns(o.Columns, len(rows), func(i int) []string { return rows[i].Group })
	servers, gpus, tokens := make([]string, len(rows)), make([]int64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		servers[i], gpus[i], tokens[i] = r.Server, r.GPUsPerServer, r.GenerationTPS
	}
	tps := data.NewField("generated tokens/s", nil, tokens)
	tps.Config = &data.FieldConfig{Unit: "short"}
	fields = append(fields, data.NewField("server", nil, servers), data.NewField("GPUs", nil, gpus), tps)
	fields = append(fields, efficiencyFields(rows)...)
	fields = append(fields, energyField(rows)...)
	f := data.NewFrame("capacity servers", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: o.Executed, Notices: o.Notices})
	return f
}

// groupColumns are n rows' group names (group gives row i's), a column per
// grouping label.
func groupColumns(columns []string, n int, group func(i int) []string) []*data.Field {
	fields := make([]*data.Field, 0, len(columns))
	for c, name := range columns {
		col := make([]string, n)
		for i := range n {
			col[i] = group(i)[c]
		}
		fields = append(fields, data.NewField(name, nil, col))
	}
	return fields
}

// floatColumn is one nullable number per row, in unit.
func floatColumn(rows []CapacityRow, name, unit string, get func(CapacityRow) *float64) *data.Field {
	vals := make([]*float64, len(rows))
	for i, r := range rows {
		vals[i] = get(r)
	}
	f := data.NewField(name, nil, vals)
	f.Config = &data.FieldConfig{Unit: unit}
	return f
}

// energyField is the energy column, when any row has a figure.
func energyField(rows []CapacityRow) []*data.Field {
	vals := make([]*float64, len(rows))
	any := false
	for i, r := range rows {
		vals[i] = r.EnergyPerMTokens
		any = any || r.EnergyPerMTokens != nil
	}
	if !any {
		return nil
	}
	f := data.NewField("energy per M tokens", nil, vals)
	f.Config = &data.FieldConfig{Unit: "kwatth"}
	return []*data.Field{f}
}

// stackFields are the stack autoscaler's columns, when any row has them.
func stackFields(rows []CapacityRow) []*data.Field {
	desired, current := make([]*float64, len(rows)), make([]*float64, len(rows))
	any := false
	for i, r := range rows {
		desired[i], current[i] = r.StackDesired, r.StackCurrent
		any = any || r.StackDesired != nil
	}
	if !any {
		return nil
	}
	return []*data.Field{data.NewField("autoscaler desired (llm-d)", nil, desired),
		data.NewField("autoscaler current (llm-d)", nil, current)}
}

// WhatIfRow is one replica count of one group's what-if.
type WhatIfRow struct {
	Group    []string
	Replicas int64
	// QueueP99 and TTFTP99 are the predicted p99s (seconds), Utilisation
	// the batch's mean occupancy (0–1), PreemptionsPerSec across the
	// replicas; Overloaded marks a count whose queue grew without bound.
	QueueP99, TTFTP99, Utilisation, PreemptionsPerSec float64
	Overloaded                                        bool
	// Now and Needed mark today's count and the one recommended.
	Now, Needed bool
}

// TwinFit is what the twin fitted for one group, carried in the what-if
// frame's custom metadata so a panel or a script can show it.
type TwinFit struct {
	Group                 []string `json:"group"`
	StepBaseMs            float64  `json:"stepBaseMs"`
	StepPerSeqMs          float64  `json:"stepPerSeqMs"`
	StepPerPrefillTokenUs float64  `json:"stepPerPrefillTokenUs"`
	R2                    float64  `json:"r2"`
	Observations          int      `json:"observations"`
	BatchLimit            int      `json:"batchLimit"`
	KVBlocks              int      `json:"kvBlocks"`
	BlockSize             int      `json:"blockSize"`
}

// CapacityWhatIf is the what-if curve: a row per group and replica count,
// ready for a bar chart or an XY chart of p99 against replicas.
func CapacityWhatIf(rows []WhatIfRow, fits []TwinFit, o CapacityOptions) *data.Frame {
	fields := groupColumns(o.Columns, len(rows), func(i int) []string { return rows[i].Group })
	fields = append(fields, whatIfFields(rows)...)
	f := data.NewFrame("what-if", fields...)
	f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTable, ExecutedQueryString: o.Executed, Notices: o.Notices,
		Custom: map[string]any{"twin": fits}})
	return f
}

func whatIfFields(rows []WhatIfRow) []*data.Field {
	num := func(name, unit string, get func(WhatIfRow) float64) *data.Field {
		vals := make([]*float64, len(rows))
		for i, r := range rows {
			if v := get(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals[i] = &v
			}
		}
		f := data.NewField(name, nil, vals)
		f.Config = &data.FieldConfig{Unit: unit}
		return f
	}
	flag := func(name string, get func(WhatIfRow) bool) *data.Field {
		vals := make([]bool, len(rows))
		for i, r := range rows {
			vals[i] = get(r)
		}
		return data.NewField(name, nil, vals)
	}
	replicas := make([]int64, len(rows))
	for i, r := range rows {
		replicas[i] = r.Replicas
	}
	return []*data.Field{
		data.NewField("replicas", nil, replicas),
		num("queue_time p99", "s", func(r WhatIfRow) float64 { return r.QueueP99 }),
		num("ttft p99", "s", func(r WhatIfRow) float64 { return r.TTFTP99 }),
		num("utilisation", "percentunit", func(r WhatIfRow) float64 { return r.Utilisation }),
		num("preemptions/s", "short", func(r WhatIfRow) float64 { return r.PreemptionsPerSec }),
		flag("overloaded", func(r WhatIfRow) bool { return r.Overloaded }),
		flag("now", func(r WhatIfRow) bool { return r.Now }),
		flag("needed", func(r WhatIfRow) bool { return r.Needed }),
	}
}
