package query

import (
	"context"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// preemptions answers preemptions as annotations, one region per burst
// (vllm.PreemptionEventsBy), or as a rate per grouping (asSeries).
func (p *plan) preemptions(ctx context.Context, o models.PreemptionsOptions) (data.Frames, error) {
	preempt := need{key: vllm.Preemptions, tags: []string{"preemptions", "preemption_rate"}, without: "no preemption can be shown"}
	if o.PerRequest {
		return p.preemptionsPerRequest(ctx)
	}
	if o.AsSeries {
		return p.preemptionRate(ctx, preempt)
	}
	expr := p.builder.Preemptions(p.query.Filters)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	events := vllm.PreemptionEventsBy(m, p.builder.InstanceOf, p.timeRange.Step)
	notices := p.noticesFor(warningNotices(warn), p.signalNotices(ctx, tagsOf(m), []need{preempt}, vllm.KVUsage))
	return data.Frames{frames.Annotations(events, strings.Join(p.builder.IdentityLabels(), vllm.IdentitySeparator), p.executed(expr), notices)}, nil
}

// preemptionRate answers preemptions per second per grouping. It is never
// read from the recorded rates: those are plain rate(), while this rate
// corrects engines younger than its window (youngRateUnion), which no
// recorded series can (they keep neither the raw series nor their times).
func (p *plan) preemptionRate(ctx context.Context, preempt need) (data.Frames, error) {
	expr := p.builder.PreemptionRate(p.query.Grouping, p.query.Filters, p.window)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(m)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: "ops", Legend: p.query.Legend, GroupLabels: p.builder.GroupLabels(p.query.Grouping),
		Executed: p.executed(expr), Notices: p.noticesFor(warningNotices(warn), roleNotes, p.signalNotices(ctx, tagsOf(m), []need{preempt}))}), nil
}

// preemptionsPerRequest answers the per-request preemption distribution
// (vllm.PreemptionsPerRequest) per grouping, its four expressions run
// concurrently; a fleet without request_num_preemptions (vLLM before 0.30)
// gets the notice that says which release added it, not zeros.
func (p *plan) preemptionsPerRequest(ctx context.Context) (data.Frames, error) {
	sigs := p.builder.PreemptionsPerRequest(p.query.Grouping, p.query.Filters, p.window)
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (prom.Matrix, []string, error) {
		return p.memo.rangeQuery(ctx, s.Expr, p.rng())
	})
	if err != nil {
		return nil, err
	}
	m, roleNotes := p.roleSeries(taggedAll(answers, sigs))
	missing := p.signalNotices(ctx, tagsOf(m), []need{{key: vllm.RequestPreemptions,
		tags: []string{vllm.PerRequestMoreThanOnce, vllm.PerRequestMean}, without: "no per-request distribution can be shown"}})
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: "short", Units: vllm.PerRequestUnits, Legend: p.query.Legend,
		GroupLabels: p.builder.GroupLabels(p.query.Grouping), Executed: p.executed(exprsOf(sigs)...),
		Notices: p.noticesFor(warningNotices(warn), roleNotes, missing, perRequestNotice)}), nil
}

// perRequestNotice says what the histogram cannot tell: vLLM's first bucket
// holds the never-preempted requests with the once-preempted ones.
var perRequestNotice = []data.Notice{{Severity: data.NoticeSeverityInfo, Text: "vllm:request_num_preemptions observes every finished request, " +
	"and its first bucket (le=1) holds the never-preempted requests together with those preempted once: the share preempted more than once " +
	"is exact, the share preempted at least once is an upper bound (from the sum), and a p99 below 1 means at most one preemption."}}
