package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// handler answers one query type from its plan: it asks Prometheus (PromQL
// from pkg/vllm) and returns finished frames (from pkg/frames).
type handler func(p *plan, ctx context.Context) (data.Frames, error)

// typed adapts a type's handler, which takes its own options struct
// (models.XxxOptions, parsed by the query table) and nothing else's.
func typed[O any](h func(p *plan, ctx context.Context, o O) (data.Frames, error)) handler {
	return func(p *plan, ctx context.Context) (data.Frames, error) {
		o, ok := models.OptionsOf[O](p.query)
		if !ok {
			// ParseQuery sets the options of the query's own type.
			return nil, fmt.Errorf("query type %q has options %T, not %T", p.query.Type, p.query.Options, o)
		}
		return h(p, ctx, o)
	}
}

// handlers is the one place a query type is registered, in the spirit of
// the SDK's QueryTypeMux: a type's handler lives in the file named after
// it. A new type is its options and table entry (pkg/models), its PromQL
// (pkg/vllm), its frames (pkg/frames), its handler here, and this one line.
var handlers = map[models.QueryType]handler{
	models.QueryQueue:       typed((*plan).queue),       // queue.go
	models.QueryWaitTime:    typed((*plan).waitTime),    // waittime.go
	models.QueryPreemptions: typed((*plan).preemptions), // preemptions.go
	models.QueryTopK:        typed((*plan).topk),        // topk.go
	models.QueryGPU:         typed((*plan).gpu),         // gpu.go
	models.QueryFleet:       typed((*plan).fleet),       // fleet.go
	models.QuerySaturation:  typed((*plan).saturation),  // saturation.go
	models.QuerySLO:         typed((*plan).slo),         // slo.go
	models.QueryHost:        typed((*plan).host),        // host.go
	models.QueryContainer:   typed((*plan).container),   // container.go
	models.QueryPrefixCache: typed((*plan).prefixCache), // prefixcache.go
	models.QuerySpecDecode:  typed((*plan).specDecode),  // specdecode.go
	models.QueryLoRA:        typed((*plan).lora),        // lora.go
	models.QueryCapacity:    typed((*plan).capacity),    // capacity.go
	models.QueryKVTransfer:  typed((*plan).kvTransfer),  // kvtransfer.go
	models.QueryWorkload:    typed((*plan).workload),    // workload.go
	models.QueryPromQL:      typed((*plan).promql),      // promql.go
}

// run answers the plan with its type's handler. models.ParseQuery accepts
// only the types of models.QueryTypes and TestEveryTypeHasAHandler checks
// each has its line here, so the error is our bug, never the user's.
func (p *plan) run(ctx context.Context) (data.Frames, error) {
	h, ok := handlers[p.query.Type]
	if !ok {
		return nil, fmt.Errorf("query type %q has no handler", p.query.Type)
	}
	return h(p, ctx)
}
