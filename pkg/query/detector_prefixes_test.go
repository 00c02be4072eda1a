package query_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// v1Marker and v0Marker are a generation marker series of each generation
// (without prefix): V1's engine-core gauge and V0's CPU-cache gauge.
const (
	v1Marker = "kv_cache_usage_perc"
	v0Marker = "cpu_cache_usage_perc"
)

// prefixFake answers metric names from a fixed list and instant queries
// by the first key the expression starts with.
type prefixFake struct {
	names   []string
	instant map[string]model.Vector
}

func (f prefixFake) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	for prefix, v := range f.instant {
		if strings.HasPrefix(expr, prefix) {
			return v, nil, nil
		}
	}
	return nil, nil, nil
}

func (f prefixFake) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (f prefixFake) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return f.names, nil
}

// profileSettings are the settings of a data source under the profile.
func profileSettings(t *testing.T, profile string) models.Settings {
	t.Helper()
	s, err := models.Settings{ScrapeInterval: time.Second, InstanceLabel: models.DefaultInstanceLabel, MetricPrefix: models.DefaultMetricPrefix}.WithProfile(profile, "test")
	require.NoError(t, err)
	return s
}

// TestDetectorEveryPrefix: the data source's generation detection reads
// the names under every prefix of its profile, and only those.
func TestDetectorEveryPrefix(t *testing.T) {
	cases := []struct {
		name, profile string
		names         []string
		want          vllm.Generation
	}{
		{"prometheus plain", models.ProfilePrometheus, []string{"vllm:" + v1Marker}, vllm.GenV1},
		{"kserve renamed", models.ProfileKServe, []string{"kserve_vllm:" + v1Marker}, vllm.GenV1},
		{"kserve plain", models.ProfileKServe, []string{"vllm:" + v0Marker}, vllm.GenV0},
		{"ray colon", models.ProfileRayServe, []string{"ray_vllm:" + v1Marker}, vllm.GenV1},
		{"ray underscore", models.ProfileRayServe, []string{"ray_vllm_" + v0Marker}, vllm.GenV0},
		{"kserve mixed prefixes", models.ProfileKServe, []string{"kserve_vllm:" + v1Marker, "vllm:" + v0Marker}, vllm.GenMixed},
		{"ray ignores plain names", models.ProfileRayServe, []string{"vllm:" + v1Marker}, vllm.GenUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := prefixFake{names: tc.names}
			d := query.NewDetectorFor(p, vllm.ForSettings(profileSettings(t, tc.profile)), time.Now)
			require.Equal(t, tc.want, d.Get(context.Background()).Generation)
		})
	}
}

// podSample is a sample of a pod's engine, named.
func podSample(name, pod, engine string) *model.Sample {
	return &model.Sample{Metric: model.Metric{model.MetricNameLabel: model.LabelValue(name), "namespace": "ns", "pod": model.LabelValue(pod), "ReplicaId": model.LabelValue(pod),
		"engine": model.LabelValue(engine), "model_name": "m"}, Value: 1}
}

// TestFleetGenerationEveryPrefix: the fleet table's generation column
// reads each engine's markers under every prefix of the profile, in a
// fleet whose engines carry different prefixes. A V0 engine (no engine
// label) would read unknown if its prefix were not matched.
func TestFleetGenerationEveryPrefix(t *testing.T) {
	cases := []struct {
		name, profile string
		pods          map[string][2]string // pod: marker series, engine label
		want          map[string]string    // pod: generation
	}{
		{"kserve renamed", models.ProfileKServe,
			map[string][2]string{"a": {"kserve_vllm:" + v0Marker, ""}}, map[string]string{"a": "V0"}},
		{"kserve plain", models.ProfileKServe,
			map[string][2]string{"a": {"vllm:" + v0Marker, ""}}, map[string]string{"a": "V0"}},
		{"ray colon", models.ProfileRayServe,
			map[string][2]string{"a": {"ray_vllm:" + v0Marker, ""}}, map[string]string{"a": "V0"}},
		{"ray underscore", models.ProfileRayServe,
			map[string][2]string{"a": {"ray_vllm_" + v0Marker, ""}}, map[string]string{"a": "V0"}},
		{"kserve mixed-prefix fleet", models.ProfileKServe,
			map[string][2]string{"a": {"kserve_vllm:" + v1Marker, "0"}, "b": {"vllm:" + v0Marker, ""}, "c": {"kserve_vllm:" + v0Marker, ""}},
			map[string]string{"a": "V1", "b": "V0", "c": "V0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := profileSettings(t, tc.profile)
			b := vllm.ForSettings(s)
			el := strings.Join(b.EngineLabels(), ", ")
			var seen, gens model.Vector
			for pod, m := range tc.pods {
				seen = append(seen, podSample("", pod, m[1]))
				gens = append(gens, podSample(m[0], pod, m[1]))
			}
			to := time.Unix(1_700_000_000, 0)
			fake := prefixFake{instant: map[string]model.Vector{
				"max by (" + el + ") (last_over_time(":  seen,
				"max by (" + el + ") ((last_over_time(": seen,
				"group by (" + el + ", __name__) (":     gens,
			}}
			e := &query.Executor{Prom: fake, Settings: s, Detector: query.NewDetectorFor(fake, b, func() time.Time { return to })}
			resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
			r := resp.Responses["F"]
			require.NoError(t, r.Error)
			rows := fleetRows(t, r.Frames[0])
			require.Len(t, rows, len(tc.want))
			got := map[string]string{}
			for _, row := range rows {
				inst := row["instance"].(string)
				got[inst[strings.LastIndex(inst, "/")+1:]] = row["generation"].(string)
			}
			require.Equal(t, tc.want, got)
		})
	}
}
