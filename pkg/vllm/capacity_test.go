package vllm

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// capSeries is one server's signal in a synthetic capacity answer.
func capSeries(model, inst, signal string, t0 time.Time, step time.Duration, vals ...float64) *series.Series {
	s := &series.Series{Labels: map[string]string{"model_name": model, "instance": inst, SignalTagLabel: signal}}
	for i, v := range vals {
		s.Times, s.Values = append(s.Times, t0.Add(time.Duration(i)*step)), append(s.Values, v)
	}
	return s
}

// TestEstimateCapacity pins the arithmetic on hand-computed histories: a
// growing queue counts as demand, only steps queued throughout measure a
// replica, too few of them give a lower bound, a stalled server is no
// replica, and a server gone at the end is not counted.
func TestEstimateCapacity(t *testing.T) {
	t0, step := time.Unix(1_700_000_000, 0).UTC(), 30*time.Second
	nan := math.NaN()
	cases := []struct {
		name string
		m    series.Matrix
		want CapacityEstimate
	}{
		{"a growing queue is demand", series.Matrix{
			capSeries("m", "a", CapFinished, t0, step, 2, 2, 2),
			capSeries("m", "a", CapWaiting, t0, step, 0, 30, 60),
			capSeries("m", "a", CapRunning, t0, step, 4, 4, 4),
			capSeries("m", "a", CapWaitingMin, t0, step, 0, 0, 0),
		}, CapacityEstimate{Replicas: 1, Arrivals: 8.0 / 3, ArrivalsNow: 3, PeakToMean: 1.125,
			Waiting: 60, PerReplica: 2, LowerBound: true}},
		{"saturated steps measure a replica", series.Matrix{
			capSeries("m", "a", CapFinished, t0, step, 1, 5, 5, 5, 5, 5),
			capSeries("m", "a", CapWaiting, t0, step, 0, 9, 9, 9, 9, 9),
			capSeries("m", "a", CapRunning, t0, step, 1, 8, 8, 8, 8, 8),
			capSeries("m", "a", CapWaitingMin, t0, step, 0, 1, 2, 3, 4, 5),
			capSeries("m", "a", CapGenTPS, t0, step, 100, 500, 500, 500, 500, 500),
		}, CapacityEstimate{Replicas: 1, Waiting: 9, PerReplica: 5, PerReplicaTokens: 500, SaturatedSteps: 5}},
		{"a stalled server and a gone one are no replicas", series.Matrix{
			capSeries("m", "a", CapFinished, t0, step, 1, 1),
			capSeries("m", "a", CapWaiting, t0, step, 0, 0),
			capSeries("m", "a", CapGenTPS, t0, step, 50, 50),
			capSeries("m", "b", CapFinished, t0, step, 1, 0),
			capSeries("m", "b", CapWaiting, t0, step, 3, 3),
			capSeries("m", "b", CapGenTPS, t0, step, 50, 0),
			capSeries("m", "c", CapFinished, t0, step, 1, nan),
			capSeries("m", "c", CapWaiting, t0, step, 0, nan),
		}, CapacityEstimate{Replicas: 1, Stalled: []string{"b"}, Waiting: 3, PerReplica: 1, PerReplicaTokens: 50, LowerBound: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			groups := CapacityGroups(c.m, []string{"model_name"}, func(ls map[string]string) string { return ls["instance"] })
			require.Len(t, groups, 1)
			got := EstimateCapacity(groups[0], step)
			require.Equal(t, c.want.Replicas, got.Replicas)
			require.Equal(t, c.want.Stalled, got.Stalled)
			require.InDelta(t, c.want.Waiting, got.Waiting, 1e-9)
			require.InDelta(t, c.want.PerReplica, got.PerReplica, 1e-9)
			require.InDelta(t, c.want.PerReplicaTokens, got.PerReplicaTokens, 1e-9)
			require.Equal(t, c.want.SaturatedSteps, got.SaturatedSteps)
			require.Equal(t, c.want.LowerBound, got.LowerBound)
			if c.want.ArrivalsNow != 0 {
				require.InDelta(t, c.want.Arrivals, got.Arrivals, 1e-9)
				require.InDelta(t, c.want.ArrivalsNow, got.ArrivalsNow, 1e-9)
				require.InDelta(t, c.want.PeakToMean, got.PeakToMean, 1e-9)
			}
		})
	}
}

// TestCapacityArrivalsCountTheQueue: 2 finished/s while the queue grows by
// 30 a 30 s step is 3 arriving per second; the first step has no step
// before it and counts what finished.
func TestCapacityArrivalsCountTheQueue(t *testing.T) {
	t0, step := time.Unix(1_700_000_000, 0).UTC(), 30*time.Second
	m := series.Matrix{
		capSeries("m", "a", CapFinished, t0, step, 2, 2, 2),
		capSeries("m", "a", CapWaiting, t0, step, 0, 30, 30),
		capSeries("m", "b", CapFinished, t0, step, 1, 1, 1),
		capSeries("m", "b", CapRunning, t0, step, 0, 0, 30),
	}
	g := CapacityGroups(m, []string{"model_name"}, func(ls map[string]string) string { return ls["instance"] })[0]
	e := EstimateCapacity(g, step)
	require.Equal(t, []float64{3, 4, 4}, e.Arrival)
	require.InDelta(t, 11.0/3, e.Arrivals, 1e-9)
	require.InDelta(t, 4/(11.0/3), e.PeakToMean, 1e-9)
}

// TestDesiredReplicas pins the closed form with hand-computed cases.
func TestDesiredReplicas(t *testing.T) {
	cases := []struct {
		arrivals, waiting, perReplica, headroom float64
		drain                                   time.Duration
		want                                    int
	}{
		{10, 0, 2, 0, time.Minute, 5},
		{10, 0, 2, 0.2, time.Minute, 6},   // 12 / 2
		{10, 120, 2, 0, time.Minute, 6},   // (10 + 2) / 2
		{10, 120, 2, 0.2, time.Minute, 8}, // 14.4 / 2 = 7.2 → 8
		{0.1, 0, 2, 0.2, time.Minute, 1},  // any demand needs one
		{0, 0, 2, 0.2, time.Minute, 0},    // none needs none
		{10, 0, 0, 0.2, time.Minute, 0},   // unknown capacity: no answer
		{10, 0, math.NaN(), 0, time.Minute, 0},
		{10, 120, 2, 0, 0, 5}, // no drain time: the standing queue is left out, not divided by zero
	}
	for _, c := range cases {
		require.Equal(t, c.want, DesiredReplicas(c.arrivals, c.waiting, c.perReplica, c.headroom, c.drain), "%+v", c)
	}
}

// TestCapacityExpressionsParse: every capacity expression is valid PromQL
// for every builder and hostile filter value.
func TestCapacityExpressionsParse(t *testing.T) {
	for bname, b := range builders() {
		for _, v := range nastyValues {
			f := models.Filters{Models: []string{v}, Instances: []string{v}}
			for _, g := range []models.Grouping{models.GroupModel, models.GroupRole, models.GroupNone} {
				var exprs []string
				for _, s := range b.CapacitySignals(g, f, "1m", 15*time.Second) {
					exprs = append(exprs, s.Expr)
				}
				l := b.CapacityLengths(g, f, time.Hour)
				exprs = append(exprs, l.PromptBuckets, l.OutputBuckets, l.PromptMean, l.OutputMean, b.CapacityHitRate(g, f, time.Hour), b.CapacityWait(models.CapacityQueueTime, g, f, time.Hour),
					b.CapacityWait(models.CapacityTTFT, g, f, 90*time.Minute), b.CapacityCacheConfig(f))
				for _, e := range exprs {
					_, err := parser.NewParser(parser.Options{}).ParseExpr(e)
					require.NoError(t, err, "%s %s %q: %s", bname, g, v, e)
				}
			}
		}
	}
}

// TestCapacityUsage: server a answers 4 steps of 30 s, idle in 2 (nothing
// running over the window, nothing waiting); b answers 2, busy in both;
// the tokens are tokens/s × 30 s.
func TestCapacityUsage(t *testing.T) {
	t0, step := time.Unix(1_700_000_000, 0).UTC(), 30*time.Second
	nan := math.NaN()
	m := series.Matrix{
		capSeries("m", "a", CapWaiting, t0, step, 0, 0, 2, 0),
		capSeries("m", "a", CapRunningAvg, t0, step, 0, 3, 0, 0),
		capSeries("m", "a", CapGenTPS, t0, step, 0, 100, 0, 0),
		capSeries("m", "b", CapWaiting, t0, step, nan, nan, 0, 0),
		capSeries("m", "b", CapRunningAvg, t0, step, nan, nan, 1, 1),
		capSeries("m", "b", CapGenTPS, t0, step, nan, nan, 10, 10),
	}
	g := CapacityGroups(m, []string{"model_name"}, func(ls map[string]string) string { return ls["instance"] })[0]
	e := EstimateCapacity(g, step)
	require.InDelta(t, 6*30.0, e.ServerSeconds, 1e-9)
	require.InDelta(t, 2.0/6, e.IdleShare, 1e-9)
	require.InDelta(t, 120*30.0, e.GeneratedTokens, 1e-9)
}

// TestStalledServerIsNoReplica: a server at the range's end with work
// queued or running (either counts) and neither tokens nor requests coming
// out is stalled and left out of the replicas; one with any output, or
// with no work at all (idle), is a replica.
func TestStalledServerIsNoReplica(t *testing.T) {
	t0, step := time.Unix(1_700_000_000, 0).UTC(), 30*time.Second
	tests := []struct {
		name                               string
		waiting, running, genTPS, finished float64
		stalled                            bool
	}{
		{"requests waiting, nothing out", 3, 0, 0, 0, true},
		{"requests running, none waiting, nothing out", 0, 2, 0, 0, true},
		{"tokens and requests out at the same rate", 3, 1, 2, 2, false},
		{"tokens out only", 3, 1, 50, 0, false},
		{"idle: no work and nothing out", 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := series.Matrix{
				capSeries("m", "a", CapWaiting, t0, step, tt.waiting),
				capSeries("m", "a", CapRunning, t0, step, tt.running),
				capSeries("m", "a", CapGenTPS, t0, step, tt.genTPS),
				capSeries("m", "a", CapFinished, t0, step, tt.finished),
			}
			g := CapacityGroups(m, []string{"model_name"}, func(ls map[string]string) string { return ls["instance"] })[0]
			e := EstimateCapacity(g, step)
			if tt.stalled {
				require.Equal(t, []string{"a"}, e.Stalled)
				require.Zero(t, e.Replicas)
				return
			}
			require.Empty(t, e.Stalled)
			require.Equal(t, 1, e.Replicas)
		})
	}
}

// TestEstimateCapacityShortRanges: a range of a single step is still read
// (its servers are the replicas, its finished requests the demand), and
// without a step the queue's growth cannot be made a rate, so the demand
// is what finished.
func TestEstimateCapacityShortRanges(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	tests := []struct {
		name     string
		step     time.Duration
		m        series.Matrix
		replicas int
		arrival  []float64
		waiting  float64
	}{
		{"one step", 30 * time.Second, series.Matrix{
			capSeries("m", "a", CapFinished, t0, time.Second, 2),
			capSeries("m", "a", CapWaiting, t0, time.Second, 4),
			capSeries("m", "b", CapFinished, t0, time.Second, 1),
			capSeries("m", "b", CapWaiting, t0, time.Second, 0),
		}, 2, []float64{3}, 4},
		{"no step: a growing queue adds nothing", 0, series.Matrix{
			capSeries("m", "a", CapFinished, t0, time.Second, 2, 2),
			capSeries("m", "a", CapWaiting, t0, time.Second, 0, 30),
		}, 1, []float64{2, 2}, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := CapacityGroups(tt.m, []string{"model_name"}, func(ls map[string]string) string { return ls["instance"] })[0]
			e := EstimateCapacity(g, tt.step)
			require.Equal(t, tt.replicas, e.Replicas)
			require.Equal(t, tt.arrival, e.Arrival)
			require.InDelta(t, tt.waiting, e.Waiting, 1e-9)
		})
	}
}

// TestCapacityWaitReadsTheObjectivesHistogram: the measured p99 shown
// beside the what-if is the histogram of the wait the objective names.
func TestCapacityWaitReadsTheObjectivesHistogram(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	tests := []struct {
		wait, reads, notReads string
	}{
		{models.CapacityTTFT, "time_to_first_token_seconds_bucket", "request_queue_time_seconds"},
		{models.CapacityQueueTime, "request_queue_time_seconds_bucket", "time_to_first_token_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.wait, func(t *testing.T) {
			e := b.CapacityWait(tt.wait, models.GroupModel, models.Filters{}, time.Hour)
			require.Contains(t, e, tt.reads)
			require.NotContains(t, e, tt.notReads)
		})
	}
}
