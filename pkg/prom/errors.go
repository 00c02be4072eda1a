package prom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// ErrorKind says what went wrong talking to Prometheus, in terms an
// operator can act on. Who must act (plugin or downstream) and the status
// each kind is answered with are decided in one place, pkg/failure.
type ErrorKind string

// Error kinds, from the network up.
const (
	KindUnreachable  ErrorKind = "unreachable"
	KindUnauthorized ErrorKind = "unauthorized"
	KindTimeout      ErrorKind = "timeout"
	KindServer       ErrorKind = "server error"
	KindBadQuery     ErrorKind = "bad query"
	KindBadResponse  ErrorKind = "bad response"
	KindCanceled     ErrorKind = "canceled"
)

// Error is a classified failure of one Prometheus call. Its message never
// holds credentials: URLs are printed without user info or query string.
type Error struct {
	Kind   ErrorKind
	Status int // HTTP status when one was received
	Op     string
	Err    error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("prometheus %s: %s (HTTP %d): %v", e.Op, e.Kind, e.Status, e.Err)
	}
	return fmt.Sprintf("prometheus %s: %s: %v", e.Op, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a classified error, or "" for anything else.
func KindOf(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return ""
}

// classify turns whatever client_golang or the transport returned into *Error.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Op == "" {
			pe.Op = op
		}
		return pe
	}
	e := &Error{Op: op, Err: stripURL(err)}
	e.Kind = kindFor(err)
	return e
}

// kindFor maps transport and API errors to a kind.
func kindFor(err error) ErrorKind {
	var apiErr *v1.Error
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.As(err, &apiErr) && storageFailure(apiErr):
		return KindServer
	case errors.As(err, &apiErr):
		return kindForAPI(apiErr.Type)
	case errors.As(err, &netErr) && netErr.Timeout():
		return KindTimeout
	default:
		return KindUnreachable
	}
}

// storageFailure tells a store that failed while the query ran from a query
// the server could not run. PromQL's engine reports both as "execution"
// errors, but a failed read of the series is always prefixed "expanding
// series:": Thanos Query without partial response answers that way when one
// of its stores is down, naming the store, and so do remote-read failures.
func storageFailure(e *v1.Error) bool {
	return e.Type == v1.ErrExec && strings.Contains(e.Msg, "expanding series: ")
}

func kindForAPI(t v1.ErrorType) ErrorKind {
	switch t {
	// VictoriaMetrics writes its HTTP status as the errorType: 400 and 422
	// for a query it cannot parse or execute, as Prometheus' bad_data and
	// execution.
	case v1.ErrBadData, v1.ErrExec, "400", "422":
		return KindBadQuery
	case v1.ErrTimeout:
		return KindTimeout
	case v1.ErrCanceled:
		return KindCanceled
	case v1.ErrBadResponse:
		return KindBadResponse
	default:
		return KindServer
	}
}

// stripURL removes the URL from *url.Error so a query string (which can hold
// a token on some proxies) never reaches a message; the op names the call.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
