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

// handlers is the one place a query type is registered, in the spirit of
// the SDK's QueryTypeMux: a type's handler lives in the file named after
// it. A new type is its model (pkg/models), its PromQL (pkg/vllm), its
// frames (pkg/frames), its handler here, and this one line.
var handlers = map[models.QueryType]handler{
	models.QueryQueue:       (*plan).queue,       // queue.go
	models.QueryWaitTime:    (*plan).waitTime,    // waittime.go
	models.QueryPreemptions: (*plan).preemptions, // preemptions.go
	models.QueryTopK:        (*plan).topk,        // topk.go
	models.QueryGPU:         (*plan).gpu,         // gpu.go
	models.QueryFleet:       (*plan).fleet,       // fleet.go
	models.QuerySaturation:  (*plan).saturation,  // saturation.go
	models.QuerySLO:         (*plan).slo,         // slo.go
	models.QueryHost:        (*plan).host,        // host.go
	models.QueryPrefixCache: (*plan).prefixCache, // prefixcache.go
	models.QuerySpecDecode:  (*plan).specDecode,  // specdecode.go
	models.QueryLoRA:        (*plan).lora,        // lora.go
	models.QueryKVTransfer:  (*plan).kvTransfer,  // kvtransfer.go
	models.QueryWorkload:    (*plan).workload,    // workload.go
	models.QueryPromQL:      (*plan).promql,      // promql.go
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
