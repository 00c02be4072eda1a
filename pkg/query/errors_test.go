package query_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/failure/failuretest"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// failingProm has the vLLM names, and fails every query with err.
type failingProm struct{ err error }

func (f failingProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, f.err
}

func (f failingProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, f.err
}

func (failingProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}, nil
}

// TestQueryErrorResponses: a query that fails with an error of each kind
// answers with that kind's status and source from the one error map,
// naming the query; the other queries of the request are not touched.
func TestQueryErrorResponses(t *testing.T) {
	for kind, err := range failuretest.Examples() {
		t.Run(string(kind), func(t *testing.T) {
			now := time.Now()
			resp := run(t, scriptedExecutor(failingProm{err}), dq("A", `{"queryType":"queue"}`, now.Add(-time.Hour), now))
			r := resp.Responses["A"]
			require.Error(t, r.Error)
			want := failure.Of(kind)
			require.Equal(t, want.Status, r.Status, r.Error.Error())
			require.Equal(t, want.Source, r.ErrorSource, r.Error.Error())
			require.Contains(t, r.Error.Error(), "query A: ")
			require.Contains(t, r.Error.Error(), err.Error())
		})
	}
}

// TestQueryErrorsOfTheUser: the user's own input is downstream: an
// invalid option, and the user's PromQL that Prometheus rejects (our own
// expressions rejected are a plugin error, above).
func TestQueryErrorsOfTheUser(t *testing.T) {
	badQuery := &prom.Error{Kind: prom.KindBadQuery, Status: 400, Op: "query", Err: errors.New("parse error")}
	tests := []struct {
		name string
		js   string
		err  error
	}{
		{name: "invalid option", js: `{"queryType":"topk","k":500}`},
		{name: "user's promql rejected", js: `{"queryType":"promql","expr":"sum("}`, err: badQuery},
		// pkg/interval's error (ErrInvalidRequest), not pkg/models'.
		{name: "bad min step", js: `{"queryType":"promql","expr":"up","interval":"5x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			r := run(t, scriptedExecutor(failingProm{tt.err}), dq("A", tt.js, now.Add(-time.Hour), now)).Responses["A"]
			require.Error(t, r.Error)
			require.Equal(t, backend.StatusBadRequest, r.Status, r.Error.Error())
			require.Equal(t, backend.ErrorSourceDownstream, r.ErrorSource, r.Error.Error())
		})
	}
}
