package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
)

// TestFleetStalledAndSleeping pins how the stall and sleep expressions
// become states: an engine the stall expression returns is stalled and
// leads the engines that are up, even with a deeper queue elsewhere; one
// whose sleep state is 1 is sleeping (not stalled, even when the stall
// expression returned it); a sleep state of 0 is awake; down and stale
// still win over both.
func TestFleetStalledAndSleeping(t *testing.T) {
	to := time.Unix(1_700_000_000, 0)
	fresh, old := float64(to.Add(-time.Second).Unix()), float64(to.Add(-time.Minute).Unix())
	all := []string{"a:1", "b:1", "c:1", "d:1", "e:1", "f:1", "g:1"}
	var seen, last, waiting, running model.Vector
	for _, inst := range all {
		seen = append(seen, sample(inst, "0", 1))
		ts := fresh
		if inst == "f:1" {
			ts = old
		}
		last = append(last, sample(inst, "0", ts))
		waiting = append(waiting, sample(inst, "0", 3))
		running = append(running, sample(inst, "0", 4))
	}
	waiting[1] = sample("b:1", "0", 50) // b queues deeply but moves
	up := model.Vector{}
	for _, inst := range all {
		v := 1.0
		if inst == "e:1" {
			v = 0
		}
		up = append(up, &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst)}, Value: model.SampleValue(v)})
	}
	fake := instantFake{
		"max by (instance, engine, model_name) (last_over_time(":                       seen,
		"max by (instance, engine, model_name) (timestamp(":                            last,
		"min by (instance) (up":                                                        up,
		"sum by (instance, engine, model_name) (vllm:num_requests_waiting":             waiting,
		"sum by (instance, engine, model_name) (vllm:num_requests_running":             running,
		"(((sum by (instance, engine, model_name) (min_over_time(":                     {sample("a:1", "0", 7), sample("c:1", "0", 7), sample("e:1", "0", 7), sample("f:1", "0", 7)},
		"max by (instance, engine, model_name) (vllm:engine_sleep_state{sleep_state!=": {sample("c:1", "0", 1), sample("d:1", "0", 1), sample("g:1", "0", 0)},
	}
	e := &query.Executor{Prom: fake, Settings: goldenSettings(), Detector: query.NewDetector(fake, "vllm:", func() time.Time { return to })}
	resp := e.QueryData(context.Background(), goldenRequest(recording{From: to.Add(-time.Minute), To: to}, map[string]string{"F": `{"queryType":"fleet"}`}))
	r := resp.Responses["F"]
	require.NoError(t, r.Error)
	state := map[string]string{}
	var order []string
	for _, row := range fleetRows(t, r.Frames[0]) {
		state[row["instance"].(string)] = row["state"].(string)
		order = append(order, row["instance"].(string))
	}
	require.Equal(t, map[string]string{
		"a:1": query.StateStalled, "b:1": query.StateMissing, "c:1": query.StateSleeping, "d:1": query.StateSleeping,
		"e:1": query.StateDown, "f:1": query.StateStale, "g:1": query.StateMissing,
	}, state)
	require.Equal(t, []string{"e:1", "a:1", "f:1"}, order[:3], "down, then stalled, then stale")
	require.Contains(t, r.Frames[0].Meta.ExecutedQueryString, "engine_sleep_state")
}
