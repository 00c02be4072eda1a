package query_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// countingProm answers every range query with one series and counts the
// calls per expression, standing in for Prometheus' own query counter.
type countingProm struct {
	mu     sync.Mutex
	calls  map[string]int
	ranges []v1.Range
}

func newCountingProm() *countingProm { return &countingProm{calls: map[string]int{}} }

func (c *countingProm) count(expr string) {
	c.mu.Lock()
	c.calls[expr]++
	c.mu.Unlock()
}

func (c *countingProm) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

func (c *countingProm) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	c.count(expr)
	return model.Vector{{Metric: model.Metric{"instance": "a:1", "vllm_signal": "value"}, Value: 1, Timestamp: model.TimeFromUnixNano(ts.UnixNano())}}, nil, nil
}

func (c *countingProm) QueryRange(_ context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	c.count(expr)
	c.mu.Lock()
	c.ranges = append(c.ranges, r)
	c.mu.Unlock()
	return prom.Matrix{{Labels: map[string]string{"instance": "a:1", "vllm_signal": "waiting"}, Times: []time.Time{r.End}, Values: []float64{1}}}, nil, nil
}

func (c *countingProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting"}, nil
}

// cacheExecutor is an executor as the plugin makes one per instance, with
// a settable clock.
func cacheExecutor(p query.Prometheus, now func() time.Time) *query.Executor {
	s := goldenSettings()
	s.ScrapeInterval = 15 * time.Second
	return &query.Executor{Prom: p, Settings: s, Detector: query.NewDetector(p, "vllm:", now), Now: now}
}

// perDashboard is the Prometheus queries one dashboardRequest needs:
// queue's running and waiting, topk's ranking and series.
const perDashboard = 4

func dashboardRequest(to time.Time, alert bool) *backend.QueryDataRequest {
	req := &backend.QueryDataRequest{Queries: []backend.DataQuery{
		dq("A", `{"queryType":"queue"}`, to.Add(-time.Hour), to),
		dq("B", `{"queryType":"topk","k":1}`, to.Add(-time.Hour), to),
	}}
	if alert {
		req.Headers = map[string]string{backend.FromAlertHeaderName: "true"}
	}
	return req
}

func requireAnswers(t *testing.T, resp *backend.QueryDataResponse) {
	t.Helper()
	for ref, r := range resp.Responses {
		require.NoError(t, r.Error, ref)
		require.NotEmpty(t, r.Frames, ref)
	}
}

// TestSharedCacheAcrossRequests: many users' requests for the same panels
// within a scrape interval cost Prometheus one fetch per distinct query;
// after the scrape interval the range that ends now is fetched again.
func TestSharedCacheAcrossRequests(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := newCountingProm()
	e := cacheExecutor(p, clock)

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(clock(), false)))
		}()
	}
	wg.Wait()
	require.Equal(t, perDashboard, p.total(), "queue's two signals, topk ranking, topk series: once each for twenty users")

	mu.Lock()
	now = now.Add(14 * time.Second)
	mu.Unlock()
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(time.Unix(1_700_000_000, 0), false)))
	require.Equal(t, perDashboard, p.total(), "within the scrape interval the same range is served from the cache")

	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(time.Unix(1_700_000_000, 0), false)))
	require.Equal(t, 2*perDashboard, p.total(), "a range ending now is never served older than the scrape interval")
}

// TestAlertQueriesBypassCache: Grafana's alerting engine always reaches
// Prometheus, and its answers are not served to dashboards either.
func TestAlertQueriesBypassCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	p := newCountingProm()
	e := cacheExecutor(p, func() time.Time { return now })
	for i := 1; i <= 3; i++ {
		requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(now, true)))
		require.Equal(t, perDashboard*i, p.total(), "alert evaluation %d", i)
	}
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(now, false)))
	require.Equal(t, 4*perDashboard, p.total(), "a dashboard does not get an alert's answer")
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(now, true)))
	require.Equal(t, 5*perDashboard, p.total(), "an alert does not get a dashboard's answer")
}

// TestNewInstanceHasItsOwnCache: when settings change Grafana makes a new
// instance (a new Executor); it must not see the old instance's answers.
func TestNewInstanceHasItsOwnCache(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	p := newCountingProm()
	old := cacheExecutor(p, clock)
	requireAnswers(t, old.QueryData(context.Background(), dashboardRequest(now, false)))
	requireAnswers(t, old.QueryData(context.Background(), dashboardRequest(now, false)))
	require.Equal(t, perDashboard, p.total())

	renewed := cacheExecutor(p, clock)
	requireAnswers(t, renewed.QueryData(context.Background(), dashboardRequest(now, false)))
	require.Equal(t, 2*perDashboard, p.total(), "the new instance fetches afresh")
}

func TestCacheTTLPolicy(t *testing.T) {
	end := time.Unix(1_700_000_000, 0)
	scrape := 15 * time.Second
	tests := []struct {
		name    string
		fetched time.Time
		step    time.Duration
		want    time.Duration
	}{
		{"range ends now", end, time.Minute, scrape},
		{"ends a scrape ago, samples may still land", end.Add(29 * time.Second), time.Minute, scrape},
		{"closed range kept for a step", end.Add(30 * time.Second), time.Minute, time.Minute},
		{"step below scrape", end.Add(time.Hour), 5 * time.Second, scrape},
		{"long step capped", end.Add(time.Hour), time.Hour, query.MaxCacheTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, query.CacheTTL(end, tt.fetched, scrape, tt.step))
		})
	}
	require.Zero(t, query.CacheTTL(end, end, 0, time.Minute), "no scrape interval, no caching")
}

// askedSince is every range asked for after the first n.
func (c *countingProm) askedSince(n int) []v1.Range {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]v1.Range(nil), c.ranges[n:]...)
}

// TestIncrementalRefreshAsksForTheNewSteps: a dashboard ending now,
// refreshed a minute later, asks Prometheus only for the steps after the
// first fetch's moment minus the overlap; alerts and a new instance (new
// settings) always ask for the whole range.
func TestIncrementalRefreshAsksForTheNewSteps(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	p := newCountingProm()
	incremental := func() *query.Executor {
		e := cacheExecutor(p, clock)
		e.Settings.Incremental, e.Settings.IncrementalOverlap = true, 10*time.Minute
		return e
	}
	e := incremental()
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(now, false)))
	first := p.askedSince(0)
	require.NotEmpty(t, first)
	for _, r := range first {
		require.Equal(t, now.Add(-time.Hour).Truncate(r.Step), r.Start.Truncate(r.Step), "the first refresh asks for the hour")
	}

	now = now.Add(time.Minute)
	requireAnswers(t, e.QueryData(context.Background(), dashboardRequest(now, false)))
	tails := p.askedSince(len(first))
	require.Len(t, tails, len(first))
	for _, r := range tails {
		final := now.Add(-time.Minute - 10*time.Minute)
		require.True(t, r.Start.After(final) && !r.Start.After(final.Add(r.Step)), "a minute later only the steps after %s are asked for, got %s", final, r.Start)
	}

	for name, ex := range map[string]*query.Executor{"alert": e, "new instance": incremental()} {
		n := len(p.askedSince(0))
		requireAnswers(t, ex.QueryData(context.Background(), dashboardRequest(now, name == "alert")))
		for _, r := range p.askedSince(n) {
			require.True(t, r.Start.Before(now.Add(-59*time.Minute)), "%s asks for the whole hour, got start %s", name, r.Start)
		}
	}
}
