package query

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// DefaultConcurrency bounds the queries of one request that run at once, so
// a dashboard of fifty panels does not open fifty connections to Prometheus.
const DefaultConcurrency = 8

// Executor runs queries for one data-source instance.
type Executor struct {
	Prom     Prometheus
	Settings models.Settings
	Detector *Detector
	// Profiles, when set, resolves the profile (auto) for each query and
	// supplies its settings and detector in place of Settings' and Detector.
	Profiles    *Profiles
	Concurrency int
	// Agents reaches the node agents; nil when none are configured.
	Agents Agents
	// Cache is shared by every request of this instance; made on first
	// use with a budget of CacheBytes (0: prom.DefaultCacheBytes) when
	// nil. CacheBytes bounds the cache and Increments together.
	Cache      *prom.Cache
	CacheBytes int64
	// Increments keeps the last answer of each range query so the next
	// one asks only for its new steps; made on first use (with the
	// settings' overlap, charged to the Cache's budget) when nil and
	// Settings.Incremental is set.
	Increments *prom.Increments
	// Now is the clock for cache freshness; time.Now when nil.
	Now       func() time.Time
	cacheOnce sync.Once
	incrOnce  sync.Once
	// Rules discovers the recording rules queries are planned on; made on
	// first use when nil and Settings.RecordingRules is on (rules.go).
	Rules     *RuleDiscovery
	rulesOnce sync.Once
	// WideAbove is how many groups (instances, engines or pools) a
	// saturation answer may have before its series and verdict timelines
	// come as one wide frame each instead of a frame per series and per
	// group (saturation_frames.go); 0 means DefaultWideAbove.
	WideAbove int
	// stores remembers a server without Thanos' store list (stores.go).
	stores storeCheck
}

// QueryData runs every query of the request concurrently and answers each
// on its own.
func (e *Executor) QueryData(ctx context.Context, req *backend.QueryDataRequest) *backend.QueryDataResponse {
	resp := backend.NewQueryDataResponse()
	alert := fromAlert(req)
	var shared *prom.Cache
	var incr *prom.Increments
	if !alert {
		// Alert rules must see Prometheus as it is now, never a cached answer.
		shared, incr = e.sharedCache(), e.increments()
	}
	m := newMemo(e.Prom, shared, incr, e.cacheTTL)
	n := e.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, dq := range req.Queries {
		wg.Add(1)
		go func(dq backend.DataQuery) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := e.runSafely(ctx, dq, m, alert)
			mu.Lock()
			resp.Responses[dq.RefID] = r
			mu.Unlock()
		}(dq)
	}
	wg.Wait()
	if down := e.downStores(ctx); len(down) > 0 {
		addStoreNotices(resp, down)
	}
	return resp
}

// runSafely turns a panic in one query into that query's plugin error.
func (e *Executor) runSafely(ctx context.Context, dq backend.DataQuery, m *memo, alert bool) (r backend.DataResponse) {
	defer func() {
		if p := recover(); p != nil {
			backend.Logger.Error("query panicked", "refId", dq.RefID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = errorResponse(dq.RefID, failure.Panic(p))
		}
	}()
	p, err := e.plan(ctx, dq, m, alert)
	if err != nil {
		return errorResponse(dq.RefID, err)
	}
	frames, err := p.run(ctx)
	if prom.KindOf(err) == prom.KindTimeout {
		err = fmt.Errorf("%w (no answer within the data source's query timeout, queryTimeout = %s: raise it in the data source settings, or narrow the query)",
			err, e.Settings.QueryTimeout)
	}
	if p.builder.JoinConflict(err) {
		err = fmt.Errorf("%w (%s)", err, p.builder.JoinConflictText())
	}
	if err != nil {
		return errorResponse(dq.RefID, err)
	}
	return backend.DataResponse{Frames: frames}
}

// RequestOf is the part of Grafana's query that pkg/models parses.
func RequestOf(dq backend.DataQuery) models.Request {
	return models.Request{RefID: dq.RefID, QueryType: dq.QueryType, JSON: dq.JSON,
		TimeRange: models.TimeRange{From: dq.TimeRange.From, To: dq.TimeRange.To},
		Interval:  dq.Interval, MaxDataPoints: dq.MaxDataPoints}
}

func (e *Executor) plan(ctx context.Context, dq backend.DataQuery, m *memo, alert bool) (*plan, error) {
	q, err := models.ParseQuery(RequestOf(dq))
	if err != nil {
		return nil, err
	}
	if alert {
		if err := checkVariables(q); err != nil {
			return nil, err
		}
	}
	iv, err := interval.Compute(interval.Input{From: q.TimeRange.From, To: q.TimeRange.To, MaxDataPoints: q.MaxDataPoints,
		IntervalMs: q.Interval.Milliseconds(), QueryInterval: q.MinStep, Scrape: e.Settings.ScrapeInterval})
	if err != nil {
		return nil, err
	}
	s, det := e.Settings, e.Detector
	if e.Profiles != nil {
		r := e.Profiles.Resolve(ctx)
		s, det = r.Settings, r.Detector
	}
	b := vllm.ForSettings(s)
	b.Detected, b.Resolution = det.Get(ctx), interval.PromDuration(max(e.Settings.ScrapeInterval, time.Second))
	p := &plan{exec: e, query: q, timeRange: iv, memo: m, alert: alert, window: interval.PromDuration(iv.RateInterval), builder: b, det: det,
		settings: resolveSettings(s)}
	if iv.Clamped {
		p.notices = []data.Notice{{Severity: data.NoticeSeverityInfo,
			Text: fmt.Sprintf("Step raised to %s so no series has more than 11,000 points over this time range.", iv.Step)}}
	}
	return p, nil
}

// checkVariables rejects alert queries holding dashboard variables.
func checkVariables(q models.Query) error {
	fields := map[string][]string{"models": q.Models, "instances": q.Instances, "engines": q.Engines, "matchers": {q.Matchers}}
	for field, vals := range fields {
		for _, v := range vals {
			if name, ok := interval.HasUnresolvedVariable(v); ok {
				return fmt.Errorf("%w: %s holds %s, which Grafana does not replace in alert rules; use a literal value", ErrUnresolvedVariable, field, name)
			}
		}
	}
	return nil
}

// fromAlert reports whether Grafana's alerting engine sent the request: it
// sets the raw header FromAlert (not an http_-prefixed forwarded header).
func fromAlert(req *backend.QueryDataRequest) bool {
	return req.Headers[backend.FromAlertHeaderName] == "true" || req.GetHTTPHeader(backend.FromAlertHeaderName) == "true"
}
