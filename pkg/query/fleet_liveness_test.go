package query_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
)

// TestFleetLivenessWithoutUp: a store fed over OTLP (or remote write)
// without the scrape series has no up. The engines' own samples decide: an
// engine whose last sample is older than three scrape intervals is stale,
// the others up, none down, and the table says that liveness came from the
// engines' series; with up present it says nothing.
func TestFleetLivenessWithoutUp(t *testing.T) {
	to := time.Unix(1_700_000_000, 0)
	fresh, old := float64(to.Add(-time.Second).Unix()), float64(to.Add(-time.Minute).Unix())
	base := func() instantFake {
		return instantFake{
			"max by (instance, engine, model_name) (last_over_time(": {sample("a:1", "0", 1), sample("b:1", "0", 1)},
			"max by (instance, engine, model_name) (timestamp(":      {sample("a:1", "0", fresh), sample("b:1", "0", old)},
		}
	}
	withUp := base()
	withUp["min by (instance) (up"] = model.Vector{{Metric: model.Metric{"instance": "a:1"}, Value: 1}, {Metric: model.Metric{"instance": "b:1"}, Value: 0}}
	tests := []struct {
		name   string
		fake   instantFake
		states []string
		notice bool
	}{
		{"no up: stale from the engine's own samples, and said", base(), []string{"b:1 stale", "a:1 missing metrics"}, true},
		{"up present: down from up, nothing said", withUp, []string{"b:1 down", "a:1 missing metrics"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &query.Executor{Prom: tt.fake, Settings: goldenSettings(), Detector: query.NewDetector(tt.fake, "vllm:", func() time.Time { return to })}
			resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
			r := resp.Responses["F"]
			require.NoError(t, r.Error)
			var got []string
			for _, row := range fleetRows(t, r.Frames[0]) {
				got = append(got, fmt.Sprintf("%s %s", row["instance"], row["state"]))
			}
			require.Equal(t, tt.states, got)
			said := false
			for _, n := range r.Frames[0].Meta.Notices {
				said = said || n.Text == query.NoUpText
			}
			require.Equal(t, tt.notice, said)
		})
	}
}
