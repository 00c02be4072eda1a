package query

import (
	"context"
	"fmt"
	"math"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

func (p *plan) rng() v1.Range {
	return v1.Range{Start: p.iv.Start, End: p.iv.End, Step: p.iv.Step}
}

// series runs one range query and frames it.
func (p *plan) series(ctx context.Context, expr string, o frames.SeriesOptions) (data.Frames, prom.Matrix, error) {
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, nil, err
	}
	o.Legend, o.GroupLabels = p.q.Legend, p.b.GroupLabels(p.q.Grouping)
	o.Executed = frames.Executed(expr, p.iv.Step)
	o.Notices = append(append(o.Notices, p.notices...), warningNotices(warn)...)
	return frames.TimeSeries(m, o), m, nil
}

func (p *plan) queue(ctx context.Context) (data.Frames, error) {
	f, _, err := p.series(ctx, p.b.Queue(p.q.Grouping, p.q.Filters), frames.SeriesOptions{Unit: string(vllm.UnitRequests)})
	return f, err
}

func (p *plan) waitTime(ctx context.Context) (data.Frames, error) {
	key := vllm.FamilySignals[p.q.Family]
	expr := p.b.WaitTime(p.q.Family, p.q.Quantiles, p.q.Live, p.q.Grouping, p.q.Filters, p.window)
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	notices := append(append(p.notices, warningNotices(warn)...), waitNotices(m, key, p.q.Live)...)
	return frames.TimeSeries(m, frames.SeriesOptions{Unit: string(vllm.UnitSeconds), Legend: p.q.Legend,
		GroupLabels: p.b.GroupLabels(p.q.Grouping), Executed: frames.Executed(expr, p.iv.Step), Notices: notices}), nil
}

// waitNotices says what a latency histogram cannot show.
func waitNotices(m prom.Matrix, key vllm.SignalKey, live bool) []data.Notice {
	var out []data.Notice
	if key == vllm.QueueTime && !live {
		out = append(out, data.Notice{Severity: data.NoticeSeverityInfo,
			Text: "Queue-time quantiles count a request only when it finishes: requests still waiting are not included. Turn on live to add the Little's-law wait, which counts them."})
	}
	lowest := vllm.SmallestBucket[key]
	if below := belowBucket(m, lowest); below != "" {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning,
			Text: fmt.Sprintf("Some %s values are below %gs, the smallest histogram bucket: they are interpolated inside the first bucket, not measured.", below, lowest)})
	}
	return out
}

// belowBucket returns the first quantile signal with a value under lowest.
func belowBucket(m prom.Matrix, lowest float64) string {
	for _, s := range m {
		sig := s.Labels[vllm.SignalLabel]
		if sig == "" || sig[0] != 'p' {
			continue
		}
		for _, f := range s.Values {
			if !math.IsNaN(f) && f > 0 && f < lowest {
				return sig
			}
		}
	}
	return ""
}

func (p *plan) preemptions(ctx context.Context) (data.Frames, error) {
	if p.q.AsSeries {
		f, _, err := p.series(ctx, p.b.PreemptionRate(p.q.Grouping, p.q.Filters, p.window), frames.SeriesOptions{Unit: "ops"})
		return f, err
	}
	expr := p.b.Preemptions(p.q.Filters)
	m, _, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, err
	}
	events := vllm.PreemptionEvents(m, p.b.InstanceLabel, p.iv.Step)
	f := frames.Annotations(events, p.b.InstanceLabel, frames.Executed(expr, p.iv.Step))
	f.Meta.Notices = p.notices
	return data.Frames{f}, nil
}
