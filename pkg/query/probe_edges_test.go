package query

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// rangeRecProm answers nothing and records the ranges it is asked about:
// the metric-name listing's and the le label-value listing's.
type rangeRecProm struct {
	namesFrom, namesTo time.Time
	lesFrom, lesTo     time.Time
}

func (p *rangeRecProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

func (p *rangeRecProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (p *rangeRecProm) MetricNames(_ context.Context, _ string, start, end time.Time) ([]string, error) {
	p.namesFrom, p.namesTo = start, end
	return nil, nil
}

func (p *rangeRecProm) LabelValues(_ context.Context, _, _ string, start, end time.Time) ([]string, error) {
	p.lesFrom, p.lesTo = start, end
	return []string{"0.5", "1.0"}, nil
}

// TestBoundsCacheStartsOverWhenFull: the cache holds at most
// maxBoundsEntries entries; the put past that starts it over, so the
// oldest entry is gone, while every put below the cap keeps the others.
func TestBoundsCacheStartsOverWhenFull(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name      string
		puts      int
		firstKept bool
		size      int
	}{
		{"two entries both kept", 2, true, 2},
		{"exactly the cap kept", maxBoundsEntries, true, maxBoundsEntries},
		{"one past the cap starts over", maxBoundsEntries + 1, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c boundsCache
			for i := range tt.puts {
				c.put(fmt.Sprint("k", i), vllm.Bounds{}, now)
			}
			_, ok := c.get("k0", now)
			require.Equal(t, tt.firstKept, ok)
			require.Len(t, c.entries, tt.size)
		})
	}
}

// TestGatewayNoticeWindow: the picker's last queue is compared with the
// engine's over the picker's refresh + staleness + one scrape (22s at a
// 15s scrape), and only for per-instance grouping.
func TestGatewayNoticeWindow(t *testing.T) {
	end := time.Unix(1_800_000_000, 0)
	series := func(tag string, vs map[time.Duration]float64, order ...time.Duration) *prom.Series {
		s := &prom.Series{Labels: map[string]string{"instance": "a", vllm.SignalTagLabel: tag}}
		for _, d := range order {
			s.Times, s.Values = append(s.Times, end.Add(-d)), append(s.Values, vs[d])
		}
		return s
	}
	picker := series(vllm.GatewayEndpointQueue, map[time.Duration]float64{0: 10}, 0)
	tests := []struct {
		name     string
		grouping models.Grouping
		engine   *prom.Series
		want     string // "" for no notice
	}{
		{"engine agreed 20s ago, inside the 22s window", models.GroupInstance,
			series("waiting", map[time.Duration]float64{20 * time.Second: 10, 0: 0}, 20*time.Second, 0), ""},
		{"engine disagrees over the whole window", models.GroupInstance,
			series("waiting", map[time.Duration]float64{30 * time.Second: 10, 0: 0}, 30*time.Second, 0),
			"queue for a (10) disagrees with the engine's own (0 to 0 over the last 22s"},
		{"not per instance: no comparison", models.GroupModel,
			series("waiting", map[time.Duration]float64{0: 0}, 0), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plan{settings: resolveSettings(models.Settings{ScrapeInterval: 15 * time.Second}),
				query: models.Query{Grouping: tt.grouping}, builder: vllm.Builder{InstanceLabel: "instance"}}
			got := p.gatewayNotices(prom.Matrix{tt.engine, picker})
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Contains(t, got[0].Text, tt.want)
		})
	}
}

// TestDetectLooksBackAnHour: stack detection lists the names of the hour
// before now, not of an hour after it.
func TestDetectLooksBackAnHour(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := &rangeRecProm{}
	r := NewProfiles(p, models.Settings{}, func() time.Time { return now })
	_, err := r.detect(context.Background(), now)
	require.NoError(t, err)
	require.Equal(t, now.Add(-time.Hour), p.namesFrom)
	require.Equal(t, now, p.namesTo)
}

// TestBoundsReachOneRateWindowBack: the le bounds are read from one rate
// window before the range's start (widened to whole DetectionTTL slots),
// so a start 30s into a slot with a 1m window reads from the slot before.
func TestBoundsReachOneRateWindowBack(t *testing.T) {
	slot := time.Unix(1_800_000_000, 0).Truncate(DetectionTTL)
	start, end := slot.Add(30*time.Second), slot.Add(time.Minute)
	p := &rangeRecProm{}
	pl := &plan{det: NewDetector(p, "vllm:", func() time.Time { return end }),
		builder:   vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"},
		timeRange: interval.Result{Start: start, End: end, RateInterval: time.Minute}}
	b := pl.bounds(context.Background(), vllm.QueueTime)
	require.False(t, b.Default)
	require.Equal(t, slot.Add(-DetectionTTL), p.lesFrom)
	require.Equal(t, slot.Add(DetectionTTL), p.lesTo)
}

// coverageProm answers the bound-coverage probes: carriers engines carry
// the objective's bound (the _bucket count) among total (the _count one).
type coverageProm struct {
	rangeRecProm
	carriers, total float64
}

func (p *coverageProm) Query(_ context.Context, expr string, _ time.Time) (model.Vector, []string, error) {
	v := p.total
	if strings.Contains(expr, "_bucket") {
		v = p.carriers
	}
	return model.Vector{{Metric: model.Metric{}, Value: model.SampleValue(v)}}, nil, nil
}

// TestCoverageNoticeOnlyWhenSomeLackTheBound: no warning when every
// selected engine carries the objective's bound, one naming how many lack
// it otherwise.
func TestCoverageNoticeOnlyWhenSomeLackTheBound(t *testing.T) {
	end := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name            string
		carriers, total float64
		want            string
	}{
		{"all carry it", 3, 3, ""},
		{"one lacks it", 2, 3, "1 of the 3 selected engines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &coverageProm{carriers: tt.carriers, total: tt.total}
			p := &plan{builder: vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}, memo: newMemo(fp, nil, nil, nil),
				timeRange: interval.Result{End: end, Step: time.Minute}}
			got := p.coverageNotices(context.Background(), "queue_time", vllm.QueueTime, vllm.Objective{Key: vllm.QueueTime, Bound: 1, Le: []string{"1.0"}})
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			require.Contains(t, got[0].Text, tt.want)
		})
	}
}

// lengthsProm answers range queries with series (one step each) and
// instant queries with nothing: no engine is seen by the probes.
type lengthsProm struct {
	series int
	exprs  []string
}

func (p *lengthsProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

func (p *lengthsProm) QueryRange(_ context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	p.exprs = append(p.exprs, expr)
	var m prom.Matrix
	for i := range p.series {
		m = append(m, &prom.Series{Labels: map[string]string{"le": fmt.Sprint(i + 1)}, Times: []time.Time{r.Start}, Values: []float64{1}})
	}
	return m, nil, nil
}

func (p *lengthsProm) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return nil, nil
}

// TestLengthsPerStepAndAbsence: a step of exactly four scrapes counts
// each step's own requests (no estimate notice); a shorter one says its
// counts are estimates; an answer with series raises no absence warning,
// one without does.
func TestLengthsPerStepAndAbsence(t *testing.T) {
	end := time.Unix(1_800_000_000, 0)
	const scrape = 15 * time.Second
	tests := []struct {
		name             string
		step             time.Duration
		series           int
		estimate, absent bool
	}{
		{"step of exactly four scrapes", 4 * scrape, 2, false, false},
		{"step under four scrapes", 4*scrape - time.Second, 2, true, false},
		{"no series", 4 * scrape, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &lengthsProm{series: tt.series}
			b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
			p := &plan{settings: resolveSettings(models.Settings{ScrapeInterval: scrape}),
				query: models.Query{Grouping: models.GroupNone}, builder: b,
				det: NewDetector(fp, "vllm:", func() time.Time { return end }), window: "1m", memo: newMemo(fp, nil, nil, nil),
				timeRange: interval.Result{Start: end.Add(-time.Hour), End: end, Step: tt.step, RateInterval: time.Minute}}
			fs, err := p.lengths(context.Background(), models.WorkloadOptions{View: models.WorkloadPrompt})
			require.NoError(t, err)
			var infos, warns []string
			for _, f := range fs {
				if f.Meta == nil {
					continue
				}
				for _, n := range f.Meta.Notices {
					if n.Severity == data.NoticeSeverityWarning {
						warns = append(warns, n.Text)
					} else {
						infos = append(infos, n.Text)
					}
				}
			}
			require.Equal(t, tt.estimate, strings.Contains(strings.Join(infos, "\n"), "fewer than 4 scrapes"), infos)
			require.Equal(t, tt.absent, len(warns) > 0, warns)
		})
	}
}
