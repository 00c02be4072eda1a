//go:build !mutation

package query_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// nodeGroups gives each server of the fleet a node label, the key the
// shards hash on (fixed names, so the split is the same on every run).
func nodeGroups(env *fleettest.Env) []promtest.Group {
	var gs []promtest.Group
	for i, addr := range env.Targets() {
		gs = append(gs, promtest.Group{Targets: []string{addr}, Labels: map[string]string{"node": fmt.Sprintf("node-%d", i)}})
	}
	return gs
}

// points is every series of a response by frame name: time → value.
func points(t *testing.T, r backend.DataResponse) map[string]map[int64]float64 {
	t.Helper()
	require.NoError(t, r.Error)
	out := map[string]map[int64]float64{}
	for _, f := range r.Frames {
		if len(f.Fields) < 2 {
			continue
		}
		ps := map[int64]float64{}
		for i := 0; i < f.Rows(); i++ {
			v, ok := f.Fields[1].ConcreteAt(i)
			if !ok {
				continue
			}
			ps[f.Fields[0].At(i).(time.Time).UnixMilli()] = v.(float64)
		}
		out[f.Name] = ps
	}
	return out
}

func requireSamePoints(t *testing.T, want, got map[string]map[int64]float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: series %v vs %v", what, mapKeys(want), mapKeys(got))
	for name, ps := range want {
		require.Contains(t, got, name, what)
		require.Equal(t, len(ps), len(got[name]), "%s %s: points", what, name)
		for ts, v := range ps {
			g, ok := got[name][ts]
			require.True(t, ok, "%s %s: no point at %d", what, name, ts)
			require.InDelta(t, v, g, 1e-9*math.Max(1, math.Abs(v)), "%s %s at %d", what, name, ts)
		}
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func merge(ms ...map[string]map[int64]float64) map[string]map[int64]float64 {
	out := map[string]map[int64]float64{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestThanosShards: two Prometheus 3 shards (hashmod relabelling) each
// scrape half of a simulated fleet, each behind a thanos sidecar, with one
// thanos query over both. Every per-instance answer through Thanos equals
// the answer of the shard that holds the instance; top-k ranks across
// shards with the hot instance first; a store that goes away is a notice
// naming it.
func TestThanosShards(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.HotFleet(31))
	hot := env.Endpoints[0].Addr
	var shards []*promtest.Server
	var sidecars []*promtest.Sidecar
	for i := 0; i < 2; i++ {
		s := promtest.Start(t, promtest.Options{Backend: promtest.Prometheus3, Groups: nodeGroups(env),
			ExternalLabels: map[string]string{"shard": fmt.Sprint(i)}, Relabel: promtest.HashmodShard("node", i, 2)})
		shards = append(shards, s)
		sidecars = append(sidecars, promtest.StartSidecar(t, s))
	}
	q := promtest.StartQuery(t, []string{sidecars[0].GRPC, sidecars[1].GRPC})
	// The strict querier health-checks its stores every ten minutes, so a
	// store stopped during the test is still queried (and fails the query).
	strict := promtest.StartQuery(t, []string{sidecars[0].GRPC, sidecars[1].GRPC}, "--no-query.partial-response", "--endpoint.info-timeout=10m")
	q.WaitForSeries(t, `group by (instance) (vllm:num_requests_running)`, 4, 60*time.Second)
	q.WaitForSeries(t, `count_over_time(vllm:num_preemptions_total[1m]) >= 18`, 1, 90*time.Second)
	for i, s := range shards {
		n := len(s.Query(t, `group by (instance) (vllm:num_requests_running)`))
		require.True(t, n > 0 && n < 4, "shard %d holds %d of 4 instances: the hashmod split must give each shard a part", i, n)
	}

	// Leave the newest samples out: a scrape landing between two queries
	// would differ, not the back ends.
	to := time.Now().Add(-3 * time.Second).Truncate(time.Second)
	from := to.Add(-45 * time.Second)
	eq, e0, e1 := executor(t, q.URL), executor(t, shards[0].URL), executor(t, shards[1].URL)
	both := func(js string) (thanos, want map[string]map[int64]float64) {
		thanos = points(t, run(t, eq, dq("A", js, from, to)).Responses["A"])
		want = merge(points(t, run(t, e0, dq("A", js, from, to)).Responses["A"]),
			points(t, run(t, e1, dq("A", js, from, to)).Responses["A"]))
		return thanos, want
	}

	t.Run("queue per instance and engine equals the shards'", func(t *testing.T) {
		got, want := both(`{"queryType":"queue","grouping":"instance_engine"}`)
		requireSamePoints(t, want, got, "queue")
	})

	t.Run("queue sums over the shards", func(t *testing.T) {
		got := points(t, run(t, eq, dq("A", `{"queryType":"queue","grouping":"none"}`, from, to)).Responses["A"])
		parts := []map[string]map[int64]float64{
			points(t, run(t, e0, dq("A", `{"queryType":"queue","grouping":"none"}`, from, to)).Responses["A"]),
			points(t, run(t, e1, dq("A", `{"queryType":"queue","grouping":"none"}`, from, to)).Responses["A"]),
		}
		for _, sig := range []string{"running", "waiting"} {
			require.Contains(t, got, sig, "series: %v", mapKeys(got))
			for ts, v := range got[sig] {
				require.InDelta(t, parts[0][sig][ts]+parts[1][sig][ts], v, 1e-9, "%s at %d", sig, ts)
			}
		}
	})

	t.Run("wait quantiles per instance equal the shards'", func(t *testing.T) {
		got, want := both(`{"queryType":"waitTime","grouping":"instance","quantiles":[0.5,0.9,0.99],"live":true}`)
		requireSamePoints(t, want, got, "waitTime")
	})

	t.Run("preemption annotations equal the shards'", func(t *testing.T) {
		anno := func(e *query.Executor) []string {
			r := run(t, e, dq("Anno", `{"queryType":"preemptions"}`, from, to)).Responses["Anno"]
			require.NoError(t, r.Error)
			f := r.Frames[0]
			var out []string
			for i := 0; i < f.Rows(); i++ {
				out = append(out, fmt.Sprint(f.Fields[0].At(i), f.Fields[1].At(i), f.Fields[2].At(i), f.Fields[3].At(i)))
			}
			return out
		}
		got := anno(eq)
		require.NotEmpty(t, got, "the hot instance preempts")
		require.ElementsMatch(t, append(anno(e0), anno(e1)...), got)
	})

	t.Run("exact top-k across shards, hot instance first", func(t *testing.T) {
		table := func(e *query.Executor) map[string]float64 {
			r := run(t, e, dq("T", `{"queryType":"topk","k":4,"rankBy":"waiting","format":"table"}`, from, to)).Responses["T"]
			require.NoError(t, r.Error)
			f := r.Frames[0]
			out := map[string]float64{}
			for i := 0; i < f.Rows(); i++ {
				out[f.Fields[1].At(i).(string)] = tableValue(t, f, i)
			}
			return out
		}
		r := run(t, eq, dq("T", `{"queryType":"topk","k":2,"rankBy":"waiting"}`, from, to)).Responses["T"]
		require.NoError(t, r.Error)
		require.Len(t, r.Frames, 3, "exactly k series and the table")
		require.Equal(t, hot, r.Frames[2].Fields[1].At(0))
		got := table(eq)
		want := table(e0)
		for k, v := range table(e1) {
			want[k] = v
		}
		require.Equal(t, want, got, "every instance's ranking value is the value of the shard that holds it")
	})

	// The strict querier is asked first, while it still holds the store
	// (it health-checks every ten minutes); the partial one notices the
	// store is gone within a second and from then on answers without it,
	// silently, so only the store list can name it.
	sidecars[1].Stop()
	t.Run("without partial response a store that is gone fails only that query, naming the store", func(t *testing.T) {
		resp := run(t, executor(t, strict.URL),
			dq("A", `{"queryType":"queue"}`, from, to),
			dq("B", `{"queryType":"promql","expr":"vector(1)"}`, from, to))
		a := resp.Responses["A"]
		require.Error(t, a.Error)
		require.Equal(t, backend.ErrorSourceDownstream, a.ErrorSource, "the store is down, not the plugin")
		require.Contains(t, a.Error.Error(), sidecars[1].GRPC, "the error names the store")
		require.NoError(t, resp.Responses["B"].Error, "a query that needs no store still answers")
	})

	t.Run("a store Thanos dropped is a notice naming it on every query", func(t *testing.T) {
		waitStoreDown(t, q.URL, sidecars[1].GRPC)
		resp := run(t, eq, dq("A", `{"queryType":"queue"}`, from, to), dq("B", `{"queryType":"topk","k":2}`, from, to))
		for _, ref := range []string{"A", "B"} {
			r := resp.Responses[ref]
			require.NoError(t, r.Error, "partial response: the other shard still answers")
			require.NotEmpty(t, r.Frames)
			text := noticeTexts(r.Frames)
			require.Contains(t, text, "cannot reach store "+sidecars[1].GRPC+" (sidecar)", "query %s names the store", ref)
			require.NotContains(t, text, sidecars[0].GRPC, "query %s: the store that answers is not named", ref)
		}
	})
}

// waitStoreDown waits until the Thanos Query at url lists store as failing.
func waitStoreDown(t *testing.T, url, store string) {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		all, ok, err := c.Stores(context.Background())
		require.NoError(t, err)
		require.True(t, ok, "thanos query has a store list")
		for _, s := range all {
			if s.Name == store && s.LastError != "" {
				return true
			}
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "thanos query marks %s down", store)
}

// tableValue reads the ranking value (the last field) of row i.
func tableValue(t *testing.T, f *data.Frame, i int) float64 {
	t.Helper()
	v, ok := f.Fields[len(f.Fields)-1].ConcreteAt(i)
	require.True(t, ok)
	return v.(float64)
}

// TestThanosHAPair: two Prometheus servers scrape the same fleet with a
// replica external label; thanos query deduplicates on it, so nothing is
// counted twice. The same pair read without deduplication counts every
// engine twice, which shows the checks would catch it.
func TestThanosHAPair(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.HotFleet(41))
	var endpoints []string
	for _, replica := range []string{"a", "b"} {
		p := promtest.Start(t, promtest.Options{Targets: env.Targets(), ExternalLabels: map[string]string{"replica": replica, "cluster": "eu-1"}})
		endpoints = append(endpoints, promtest.StartSidecar(t, p).GRPC)
	}
	dedup := promtest.StartQuery(t, endpoints, "--query.replica-label=replica")
	raw := promtest.StartQuery(t, endpoints)
	dedup.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 10`, 8, 60*time.Second)
	raw.WaitForSeries(t, `vllm:num_requests_running`, 16, 60*time.Second)
	to := time.Now().Add(-2 * time.Second)
	from := to.Add(-30 * time.Second)

	count := func(url string) float64 {
		r := run(t, executor(t, url), dq("C", `{"queryType":"promql","expr":"count(vllm:num_requests_running)"}`, from, to)).Responses["C"]
		f := r.Frames[0]
		require.NoError(t, r.Error)
		v, ok := f.Fields[1].ConcreteAt(f.Rows() - 1)
		require.True(t, ok)
		return v.(float64)
	}
	require.Equal(t, 8.0, count(dedup.URL))
	require.Equal(t, 16.0, count(raw.URL), "without deduplication the pair is counted twice")

	e := executor(t, dedup.URL)
	t.Run("health counts each engine once", func(t *testing.T) {
		s, err := models.ParseSettings(models.Instance{URL: dedup.URL})
		require.NoError(t, err)
		c, err := prom.New(prom.Options{URL: s.URL, Timeout: s.QueryTimeout})
		require.NoError(t, err)
		res := health.Check(context.Background(), c, s, time.Now())
		require.Equal(t, backend.HealthStatusOk, res.Status, res.Message)
		require.Contains(t, res.Message, "Thanos "+promtest.ThanosVersion+": vLLM V1 metrics found: 8 engines on 4 instances serving 2 models")
	})

	t.Run("queue has one series per engine, top-k counts two engines per instance", func(t *testing.T) {
		resp := run(t, e,
			dq("Q", `{"queryType":"queue","grouping":"instance_engine"}`, from, to),
			dq("T", `{"queryType":"topk","k":4,"rankBy":"running","format":"table"}`, from, to),
		)
		q := points(t, resp.Responses["Q"])
		running := 0
		for name := range q {
			if strings.HasSuffix(name, " running") {
				running++
			}
		}
		require.Equal(t, 8, running, "series: %v", mapKeys(q))
		tbl := resp.Responses["T"].Frames[0]
		_, idx := tbl.FieldByName("engines")
		require.GreaterOrEqual(t, idx, 0)
		require.Equal(t, 4, tbl.Rows())
		for i := 0; i < tbl.Rows(); i++ {
			require.EqualValues(t, 2, tbl.Fields[idx].At(i), "row %d", i)
		}
	})
}
