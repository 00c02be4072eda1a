// Package failuretest holds one error of each kind of the error map
// (pkg/failure), shaped as it reaches a boundary, for the boundaries'
// table-driven tests.
package failuretest

import (
	"context"
	"errors"
	"fmt"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// Examples returns an error of every kind (failure.Kinds), wrapped as
// the code that raises it wraps it.
func Examples() map[failure.Kind]error {
	promErr := func(k prom.ErrorKind) error {
		return &prom.Error{Kind: k, Op: "query", Err: errors.New(string(k))}
	}
	return map[failure.Kind]error{
		failure.InvalidInput: fmt.Errorf("%w: k must be a whole number from 1 to 100, got 500", models.ErrInvalidQuery),
		failure.Canceled:     promErr(prom.KindCanceled),
		failure.Timeout:      promErr(prom.KindTimeout),
		failure.Unreachable:  promErr(prom.KindUnreachable),
		failure.Unauthorized: &prom.Error{Kind: prom.KindUnauthorized, Status: 401, Op: "query", Err: errors.New("bad token")},
		failure.Server:       &prom.Error{Kind: prom.KindServer, Status: 503, Op: "query", Err: errors.New("store down")},
		failure.BadResponse:  promErr(prom.KindBadResponse),
		failure.BadQuery:     &prom.Error{Kind: prom.KindBadQuery, Status: 400, Op: "query", Err: errors.New("parse error")},
		failure.Internal:     fmt.Errorf("fetch: %w", failure.Panic("index out of range")),
	}
}

// Context is a context on which the SDK's error source can be recorded,
// as the SDK prepares every request's context.
func Context() context.Context {
	return initSource(context.Background())
}
