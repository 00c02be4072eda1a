package query

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// ErrUnresolvedVariable is returned for alert queries that still hold a
// dashboard variable: Grafana does not interpolate those for alert rules.
var ErrUnresolvedVariable = errors.New("unresolved template variable")

// panicError is a panic caught on a goroutine the query started (a fetch
// or one signal of several): the query's plugin error, never the process's.
type panicError struct {
	value any
}

func newPanicError(p any) error {
	backend.Logger.Error("query goroutine panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return &panicError{value: p}
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error in the vLLM data source (please report it): %v", e.value)
}

// errorResponse classifies an error at the boundary: the user's input and
// the systems we query are downstream; anything else is our bug.
func errorResponse(refID string, err error) backend.DataResponse {
	msg := fmt.Sprintf("query %s: %v", refID, err)
	var pe *panicError
	if errors.As(err, &pe) {
		return backend.ErrDataResponseWithSource(backend.StatusInternal, backend.ErrorSourcePlugin, msg)
	}
	if prom.KindOf(err) != "" {
		return promErrorResponse(msg, err)
	}
	switch {
	case errors.Is(err, models.ErrInvalidQuery), errors.Is(err, ErrUnresolvedVariable), backend.IsDownstreamError(err):
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream, msg)
	case errors.Is(err, context.DeadlineExceeded):
		return backend.ErrDataResponseWithSource(backend.StatusTimeout, backend.ErrorSourceDownstream, msg)
	case errors.Is(err, context.Canceled):
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream, msg)
	}
	return promErrorResponse(msg, err)
}

func promErrorResponse(msg string, err error) backend.DataResponse {
	switch prom.KindOf(err) {
	case prom.KindUnreachable:
		return backend.ErrDataResponseWithSource(backend.StatusBadGateway, backend.ErrorSourceDownstream, msg)
	case prom.KindTimeout:
		return backend.ErrDataResponseWithSource(backend.StatusTimeout, backend.ErrorSourceDownstream, msg)
	case prom.KindUnauthorized:
		return backend.ErrDataResponseWithSource(backend.StatusUnauthorized, backend.ErrorSourceDownstream, msg)
	case prom.KindServer, prom.KindBadResponse, prom.KindCanceled:
		return backend.ErrDataResponseWithSource(backend.StatusBadGateway, backend.ErrorSourceDownstream, msg)
	case prom.KindBadQuery:
		// Every expression is ours, so Prometheus rejecting one is our bug
		// (or a server missing a PromQL function, which the message names).
		return backend.ErrDataResponseWithSource(backend.StatusInternal, backend.ErrorSourcePlugin, msg)
	}
	return backend.ErrDataResponseWithSource(backend.StatusInternal, backend.ErrorSourcePlugin, msg)
}
