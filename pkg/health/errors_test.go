package health_test

import (
	"context"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/failure/failuretest"
	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// brokenProm fails with err from the call named by at: "buildinfo" (and
// every call after it), or "count" (the engine count, after the names).
type brokenProm struct {
	err error
	at  string
}

func (brokenProm) Host() string { return "prom:9090" }

func (p brokenProm) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	if p.at == "buildinfo" {
		return v1.BuildinfoResult{}, p.err
	}
	return v1.BuildinfoResult{Version: "2.42.0"}, nil
}

func (p brokenProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	if p.at == "buildinfo" {
		return nil, p.err
	}
	return []string{"vllm:num_requests_running", "vllm:kv_cache_usage_perc"}, nil
}

func (p brokenProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, p.err
}

// TestHealthErrors: Save & test fails with a message fitted to each kind
// of the one error map, and records the kind's error source for the SDK.
// A buildinfo failure that proves the server answered (it rejected the
// call, failed inside, or sent something else) is a Prometheus-compatible
// server, and the next call's failure is reported.
func TestHealthErrors(t *testing.T) {
	atBuildinfo := map[failure.Kind]string{
		failure.InvalidInput: "is unreachable",
		failure.Canceled:     "is unreachable",
		failure.Unreachable:  "is unreachable",
		failure.Internal:     "is unreachable",
		failure.Unauthorized: "rejected the credentials",
		failure.Timeout:      "did not answer within the query timeout",
		failure.Server:       "Prometheus-compatible server at prom:9090 answered, but listing metric names failed",
		failure.BadResponse:  "Prometheus-compatible server at prom:9090 answered, but listing metric names failed",
		failure.BadQuery:     "Prometheus-compatible server at prom:9090 answered, but listing metric names failed",
	}
	require.Len(t, atBuildinfo, len(failure.Kinds()))
	s := models.Settings{InstanceLabel: "instance", MetricPrefix: "vllm:"}
	for kind, err := range failuretest.Examples() {
		for _, at := range []string{"buildinfo", "count"} {
			t.Run(string(kind)+" at "+at, func(t *testing.T) {
				ctx := failuretest.Context()
				res := health.Check(ctx, brokenProm{err: err, at: at}, s, time.Now())
				require.Equal(t, backend.HealthStatusError, res.Status, res.Message)
				want := "Prometheus 2.42.0 has vLLM metric names, but counting engines failed"
				if at == "buildinfo" {
					want = atBuildinfo[kind]
				}
				require.Contains(t, res.Message, want)
				require.Contains(t, res.Message, err.Error())
				require.Equal(t, failure.Of(kind).Source, backend.ErrorSourceFromContext(ctx))
			})
		}
	}
}
