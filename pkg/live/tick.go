package live

import (
	"context"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// Querier answers data queries: pkg/query's Executor, so a tick runs the
// kind's ordinary handler (rules, cache, notices and all).
type Querier interface {
	QueryData(ctx context.Context, req *backend.QueryDataRequest) *backend.QueryDataResponse
}

// refID names the one query of a tick.
const refID = "live"

// window is how many ticks of history a tick's query spans: enough for the
// step math to settle on the tick as its step, and for the queue's newest
// point to exist when one scrape came late.
const window = 4

// Tick returns the channel's TickFunc over q.
func (c Channel) Tick(q Querier) TickFunc {
	return func(ctx context.Context, at time.Time) *data.Frame {
		return c.frame(ctx, q, at)
	}
}

// frame runs one tick: the query over the last few ticks up to at, and
// the one live frame of its answer; a failed query (Prometheus down, a
// timeout) is an error frame, and the loop goes on.
func (c Channel) frame(ctx context.Context, q Querier, at time.Time) *data.Frame {
	f := c.answer(ctx, q, at)
	result := "ok"
	if f.Meta != nil && len(f.Meta.Notices) > 0 && f.Meta.Notices[0].Severity == data.NoticeSeverityError {
		result = "error"
	}
	liveTicks.WithLabelValues(string(c.Kind), result).Inc()
	return f
}

func (c Channel) answer(ctx context.Context, q Querier, at time.Time) *data.Frame {
	dq := backend.DataQuery{RefID: refID, QueryType: string(c.Kind), JSON: c.Query, Interval: c.Every,
		MaxDataPoints: window, TimeRange: backend.TimeRange{From: at.Add(-window * c.Every), To: at}}
	resp := q.QueryData(ctx, &backend.QueryDataRequest{Queries: []backend.DataQuery{dq}})
	r, ok := resp.Responses[refID]
	switch {
	case !ok:
		return frames.LiveError(string(c.Kind), at, "the query returned no answer")
	case r.Error != nil:
		return frames.LiveError(string(c.Kind), at, r.Error.Error())
	case c.Kind == models.QueryFleet && len(r.Frames) > 0:
		return frames.LiveTable(string(c.Kind), r.Frames[0])
	default:
		return frames.LiveSeries(string(c.Kind), r.Frames, at)
	}
}
