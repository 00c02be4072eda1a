package failure

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// Kind says what went wrong, in the terms that decide who must act.
type Kind string

// The kinds. Those of a Prometheus call are prom's kinds.
const (
	// InvalidInput: the user's query or settings (models.ErrInvalidQuery,
	// models.ErrUnresolvedVariable, interval.ErrInvalidRequest, or an
	// error marked downstream with the SDK's backend.DownstreamError).
	InvalidInput Kind = "invalid input"
	// Canceled: the request was withdrawn (context canceled, or
	// Prometheus reporting the query canceled).
	Canceled Kind = Kind(prom.KindCanceled)
	// Timeout: no answer within the query timeout.
	Timeout Kind = Kind(prom.KindTimeout)
	// Unreachable: the network failed (refused, DNS, TLS, reset).
	Unreachable Kind = Kind(prom.KindUnreachable)
	// Unauthorized: Prometheus rejected our credentials.
	Unauthorized Kind = Kind(prom.KindUnauthorized)
	// Server: Prometheus (or one of its stores) failed.
	Server Kind = Kind(prom.KindServer)
	// BadResponse: Prometheus answered with something we cannot read.
	BadResponse Kind = Kind(prom.KindBadResponse)
	// BadQuery: Prometheus rejected an expression this plugin wrote. The
	// user's own PromQL is turned into InvalidInput before it gets here.
	BadQuery Kind = Kind(prom.KindBadQuery)
	// Internal: our bug (a panic, or any error nothing above claims).
	Internal Kind = "internal"
)

// Class is one row of the map.
type Class struct {
	Kind   Kind
	Status backend.Status
	Source backend.ErrorSource
}

// table is the map. The user's input and the systems we query are
// downstream; only what we got wrong is the plugin's.
var table = map[Kind]Class{
	InvalidInput: {InvalidInput, backend.StatusBadRequest, backend.ErrorSourceDownstream},
	Canceled:     {Canceled, backend.StatusBadRequest, backend.ErrorSourceDownstream},
	Timeout:      {Timeout, backend.StatusTimeout, backend.ErrorSourceDownstream},
	Unreachable:  {Unreachable, backend.StatusBadGateway, backend.ErrorSourceDownstream},
	Unauthorized: {Unauthorized, backend.StatusUnauthorized, backend.ErrorSourceDownstream},
	Server:       {Server, backend.StatusBadGateway, backend.ErrorSourceDownstream},
	BadResponse:  {BadResponse, backend.StatusBadGateway, backend.ErrorSourceDownstream},
	BadQuery:     {BadQuery, backend.StatusInternal, backend.ErrorSourcePlugin},
	Internal:     {Internal, backend.StatusInternal, backend.ErrorSourcePlugin},
}

// Kinds lists every kind, for tests that walk the table.
func Kinds() []Kind {
	return []Kind{InvalidInput, Canceled, Timeout, Unreachable, Unauthorized, Server, BadResponse, BadQuery, Internal}
}

// Of returns the row of a kind; an unknown kind is Internal.
func Of(k Kind) Class {
	if c, ok := table[k]; ok {
		return c
	}
	return table[Internal]
}

// Classify returns the row of err (nil is Internal: a caller that fails
// without an error is our bug too).
func Classify(err error) Class {
	return Of(kindOf(err))
}

// kindOf names what went wrong. The order matters: a panic is ours
// whatever it wraps; a Prometheus call's kind was decided where the call
// failed; the input sentinels of models and interval name the user's
// mistake; a deadline or a cancel comes before the downstream marker,
// because the SDK counts both as downstream errors and would otherwise
// hide the timeout; network failures outside Prometheus calls (node
// agents) are upstream like Prometheus' own.
func kindOf(err error) Kind {
	var pe *panicError
	switch {
	case errors.As(err, &pe):
		return Internal
	case prom.KindOf(err) != "":
		return Kind(prom.KindOf(err))
	case errors.Is(err, models.ErrInvalidQuery), errors.Is(err, models.ErrUnresolvedVariable),
		errors.Is(err, interval.ErrInvalidRequest):
		return InvalidInput
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	case backend.IsDownstreamError(err):
		return InvalidInput
	case err != nil && backend.IsDownstreamHTTPError(err):
		return Unreachable
	}
	return Internal
}

// DataResponse is a query's error response with this row's status and
// source.
func (c Class) DataResponse(msg string) backend.DataResponse {
	return backend.ErrDataResponseWithSource(c.Status, c.Source, msg)
}

// HTTPStatus is the status a resource route answers with. Unauthorized is
// a gateway error there: the route is our gateway to Prometheus, and a
// 401 would tell the browser that its own Grafana session was refused.
func (c Class) HTTPStatus() int {
	if c.Status == backend.StatusUnauthorized {
		return http.StatusBadGateway
	}
	return int(c.Status)
}

// Record sets this row's error source on ctx, for the SDK's logs,
// metrics and traces of a Save & test or resource call that failed. A
// context the SDK did not prepare (a test's) is left as it is.
func (c Class) Record(ctx context.Context) {
	_ = backend.WithErrorSource(ctx, c.Source)
}

// panicError is a panic caught on a goroutine of a request: the request's
// plugin error, never the process's.
type panicError struct {
	value any
}

// Panic turns a recovered panic value into an error that classifies as
// Internal.
func Panic(value any) error {
	return &panicError{value: value}
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error in the vLLM data source (please report it): %v", e.value)
}
