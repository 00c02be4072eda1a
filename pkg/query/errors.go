package query

import (
	"fmt"
	"runtime/debug"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// ErrUnresolvedVariable is returned for alert queries that still hold a
// dashboard variable: Grafana does not interpolate those for alert rules.
var ErrUnresolvedVariable = models.ErrUnresolvedVariable

// newPanicError logs a panic caught on a goroutine the query started (a
// fetch or one signal of several) and makes it the query's plugin error,
// never the process's.
func newPanicError(p any) error {
	backend.Logger.Error("query goroutine panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return failure.Panic(p)
}

// errorResponse answers a failed query with the status and error source
// of the one error map (pkg/failure).
func errorResponse(refID string, err error) backend.DataResponse {
	return failure.Classify(err).DataResponse(fmt.Sprintf("query %s: %v", refID, err))
}
