package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
)

// TestFleetStaleAfterThreeScrapes pins the stale window at its edge: an
// engine whose last sample is exactly three scrape intervals old is still
// reporting; a second more, or a fourth interval, is stale.
func TestFleetStaleAfterThreeScrapes(t *testing.T) {
	const scrape = 10 * time.Second
	to := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name string
		age  time.Duration
		want string
	}{
		{name: "one scrape old", age: scrape, want: query.StateMissing},
		{name: "exactly three scrapes old", age: 3 * scrape, want: query.StateMissing},
		{name: "a second past three scrapes", age: 3*scrape + time.Second, want: query.StateStale},
		{name: "four scrapes old", age: 4 * scrape, want: query.StateStale},
		{name: "five scrapes old", age: 5 * scrape, want: query.StateStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := float64(to.Add(-tt.age).Unix())
			fake := instantFake{
				"max by (instance, engine, model_name) (last_over_time(": {sample("a:1", "0", 1)},
				"max by (instance, engine, model_name) (timestamp(":      {sample("a:1", "0", last)},
				"min by (instance) (up":                                  {{Metric: model.Metric{"instance": "a:1"}, Value: 1}},
			}
			s := goldenSettings()
			s.ScrapeInterval = scrape
			e := &query.Executor{Prom: fake, Settings: s, Detector: query.NewDetector(fake, "vllm:", func() time.Time { return to })}
			resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-10 * time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
			r := resp.Responses["F"]
			require.NoError(t, r.Error)
			rows := fleetRows(t, r.Frames[0])
			require.Len(t, rows, 1)
			require.Equal(t, tt.want, rows[0]["state"], "last sample %s old, scrape interval %s", tt.age, scrape)
		})
	}
}
