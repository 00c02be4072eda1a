package failure_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/failure/failuretest"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// TestTable pins the map: every kind's status, source and resource status.
func TestTable(t *testing.T) {
	down, plugin := backend.ErrorSourceDownstream, backend.ErrorSourcePlugin
	tests := []struct {
		kind   failure.Kind
		status backend.Status
		source backend.ErrorSource
		http   int
	}{
		{failure.InvalidInput, backend.StatusBadRequest, down, http.StatusBadRequest},
		{failure.Canceled, backend.StatusBadRequest, down, http.StatusBadRequest},
		{failure.Timeout, backend.StatusTimeout, down, http.StatusGatewayTimeout},
		{failure.Unreachable, backend.StatusBadGateway, down, http.StatusBadGateway},
		{failure.Unauthorized, backend.StatusUnauthorized, down, http.StatusBadGateway},
		{failure.Server, backend.StatusBadGateway, down, http.StatusBadGateway},
		{failure.BadResponse, backend.StatusBadGateway, down, http.StatusBadGateway},
		{failure.BadQuery, backend.StatusInternal, plugin, http.StatusInternalServerError},
		{failure.Internal, backend.StatusInternal, plugin, http.StatusInternalServerError},
	}
	require.Len(t, tests, len(failure.Kinds()), "a kind without a row here")
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			c := failure.Of(tt.kind)
			require.Equal(t, failure.Class{Kind: tt.kind, Status: tt.status, Source: tt.source}, c)
			require.Equal(t, tt.http, c.HTTPStatus())
			r := c.DataResponse("query A: boom")
			require.Equal(t, tt.status, r.Status)
			require.Equal(t, tt.source, r.ErrorSource)
			require.EqualError(t, r.Error, "query A: boom")
		})
	}
	require.Equal(t, failure.Internal, failure.Of("no such kind").Kind)
}

// TestEveryPromKindIsARow: prom's kinds are rows of the map, not a second
// map; a new prom kind without a row would be called our bug.
func TestEveryPromKindIsARow(t *testing.T) {
	kinds := []prom.ErrorKind{prom.KindUnreachable, prom.KindUnauthorized, prom.KindTimeout, prom.KindServer,
		prom.KindBadQuery, prom.KindBadResponse, prom.KindCanceled}
	for _, k := range kinds {
		got := failure.Classify(&prom.Error{Kind: k, Err: errors.New("x")})
		require.Equal(t, failure.Kind(k), got.Kind, k)
		require.Contains(t, failure.Kinds(), got.Kind, k)
	}
}

// TestClassify: what each error is, including the cases where the old
// classifiers disagreed (marked "was").
func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	_, intervalErr := interval.Compute(interval.Input{From: time.Unix(100, 0), To: time.Unix(200, 0), QueryInterval: "5x"})
	tests := []struct {
		name string
		err  error
		want failure.Kind
	}{
		{"invalid query", fmt.Errorf("%w: quantile 1.5 is out of range (0, 1)", models.ErrInvalidQuery), failure.InvalidInput},
		{"unresolved variable in an alert", fmt.Errorf("%w: expr holds $model", models.ErrUnresolvedVariable), failure.InvalidInput},
		{"bad interval (marked with interval.ErrInvalidRequest)", intervalErr, failure.InvalidInput},
		{"wrapped interval error", fmt.Errorf("query A: %w", intervalErr), failure.InvalidInput},
		{"marked downstream with the SDK", backend.DownstreamError(errors.New("bad input")), failure.InvalidInput},
		// was: 502 for Prometheus' cancel but 400 for the context's; one kind now.
		{"prometheus canceled", &prom.Error{Kind: prom.KindCanceled, Err: context.Canceled}, failure.Canceled},
		{"context canceled", fmt.Errorf("fetch: %w", context.Canceled), failure.Canceled},
		// was: 400 (the SDK counts a deadline as downstream, which hid the timeout case).
		{"deadline outside a prometheus call", fmt.Errorf("agent: %w", context.DeadlineExceeded), failure.Timeout},
		// was: a plugin error; the same failure in a Prometheus call is unreachable.
		{"connection refused outside a prometheus call", fmt.Errorf("agent: %w", refused), failure.Unreachable},
		// was: downstream in prom.Error.Source(); Prometheus rejecting our own expression is our bug.
		{"prometheus rejected our expression", &prom.Error{Kind: prom.KindBadQuery, Err: errors.New("parse error")}, failure.BadQuery},
		{"prometheus error wins over what it wraps", &prom.Error{Kind: prom.KindServer, Err: fmt.Errorf("%w", models.ErrInvalidQuery)}, failure.Server},
		{"panic, whatever it wraps", fmt.Errorf("%w", failure.Panic(context.Canceled)), failure.Internal},
		{"unknown error is ours", errors.New("nil map"), failure.Internal},
		{"marked as ours", backend.PluginError(errors.New("bug")), failure.Internal},
		{"no error", nil, failure.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, failure.Classify(tt.err).Kind, "%v", tt.err)
		})
	}
}

// TestExamples: the shared examples are of the kind they are filed under.
func TestExamples(t *testing.T) {
	ex := failuretest.Examples()
	require.Len(t, ex, len(failure.Kinds()))
	for k, err := range ex {
		require.Equal(t, k, failure.Classify(err).Kind, "%v", err)
	}
}

// TestRecord: the row's source is recorded on a prepared context, and an
// unprepared one is left alone.
func TestRecord(t *testing.T) {
	ctx := failuretest.Context()
	require.Equal(t, backend.ErrorSourcePlugin, backend.ErrorSourceFromContext(ctx))
	failure.Of(failure.Timeout).Record(ctx)
	require.Equal(t, backend.ErrorSourceDownstream, backend.ErrorSourceFromContext(ctx))
	failure.Of(failure.Internal).Record(ctx)
	require.Equal(t, backend.ErrorSourcePlugin, backend.ErrorSourceFromContext(ctx))
	require.NotPanics(t, func() { failure.Of(failure.Timeout).Record(context.Background()) })
}

// TestPanicMessage: a panic's message asks for a report and names the value.
func TestPanicMessage(t *testing.T) {
	require.EqualError(t, failure.Panic("boom"), "internal error in the vLLM data source (please report it): boom")
}
