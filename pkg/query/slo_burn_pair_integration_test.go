//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// burnHistory is a backfilled ttft history of two engines, sampled every
// 15s, 100 requests a sample: "flare" met the 0.5s objective for 99% of
// its requests until ten minutes before the end and for 50% since (its
// short windows burn faster than its long ones); "healed" for 70% until
// then and 100% since (its long windows burn faster).
type burnHistory struct {
	start, end time.Time
	recent     time.Time // the regimes change after it
	step       time.Duration
}

var burnShares = map[string][2]float64{"flare": {0.99, 0.5}, "healed": {0.7, 1}}

const burnPerSample = 100

// good is instance's cumulative count of requests under 0.5s at ts (a
// sample time): a large start, so rate's extrapolation never stops at zero.
func (h burnHistory) good(instance string, ts time.Time) float64 {
	n := int64(ts.Sub(h.start) / h.step)
	recent := max(0, n-int64(h.recent.Sub(h.start)/h.step)) // samples after h.recent
	s := burnShares[instance]
	return 1e6 + burnPerSample*(float64(n-recent)*s[0]+float64(recent)*s[1])
}

func (h burnHistory) count(ts time.Time) float64 {
	return 1e6 + burnPerSample*float64(ts.Sub(h.start)/h.step)
}

// burn is the burn rate over window w ending at at (off the sample grid,
// so Prometheus 2's closed and 3's left-open windows hold the same
// samples): the error share between the first and the last sample inside
// it over the budget (rate() scales a bucket and the count alike, so
// their ratio is the ratio of the increases between those samples).
func (h burnHistory) burn(instance string, at time.Time, w time.Duration, budget float64) float64 {
	first := at.Add(-w).Truncate(h.step).Add(h.step)
	if first.Before(h.start) {
		first = h.start
	}
	last := at.Truncate(h.step)
	att := (h.good(instance, last) - h.good(instance, first)) / (h.count(last) - h.count(first))
	return (1 - att) / budget
}

func (h burnHistory) families() []omFamily {
	var running, hist []omSeries
	for _, inst := range []string{"flare", "healed"} {
		lbl := fmt.Sprintf(`instance="%s:8000",engine="0",model_name="m",job="vllm"`, inst)
		running = append(running, omSeries{name: "vllm:num_requests_running", labels: lbl, value: func(time.Time) float64 { return 3 }})
		hist = append(hist,
			omSeries{name: "vllm:time_to_first_token_seconds_bucket", labels: lbl + `,le="0.1"`,
				value: func(ts time.Time) float64 { return h.good(inst, ts) / 2 }},
			omSeries{name: "vllm:time_to_first_token_seconds_bucket", labels: lbl + `,le="0.5"`,
				value: func(ts time.Time) float64 { return h.good(inst, ts) }},
			omSeries{name: "vllm:time_to_first_token_seconds_bucket", labels: lbl + `,le="+Inf"`, value: h.count},
			omSeries{name: "vllm:time_to_first_token_seconds_count", labels: lbl, value: h.count},
			omSeries{name: "vllm:time_to_first_token_seconds_sum", labels: lbl,
				value: func(ts time.Time) float64 { return h.count(ts) * 0.3 }},
		)
	}
	return []omFamily{
		{name: "vllm:num_requests_running", typ: "gauge", series: running},
		{name: "vllm:kv_cache_usage_perc", typ: "gauge", series: []omSeries{{name: "vllm:kv_cache_usage_perc",
			labels: `instance="flare:8000",engine="0",model_name="m",job="vllm"`, value: func(time.Time) float64 { return 0.4 }}}},
		{name: "vllm:time_to_first_token_seconds", typ: "histogram", series: hist},
	}
}

// TestSLOBurnPairIsTheSmallerRate: each of the workbook's burn pairs is
// the smaller of its long-window and short-window burn rates (the alert
// fires only when both burn), on Prometheus 2 and 3: where the short
// window burns faster ("flare") the pair is the long window's rate, where
// the long one does ("healed") the short window's, numerically.
func TestSLOBurnPairIsTheSmallerRate(t *testing.T) {
	t.Parallel()
	// at, the instant read, is 7s past a sample and before now.
	at := time.Now().Truncate(15 * time.Second).Add(-15*time.Second + 7*time.Second)
	h := burnHistory{start: at.Truncate(15 * time.Second).Add(-12 * time.Hour), end: at.Add(5 * time.Minute), step: 15 * time.Second,
		recent: at.Add(-10 * time.Minute)}
	const target, budget = 0.9, 0.1
	for _, k := range promtest.Kinds()[:2] {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			srv := backfilled(t, k, h.families(), h.start, h.end, h.step)
			e := settingsExecutor(t, srv.URL, `{"scrapeInterval":"15s"}`)
			js := fmt.Sprintf(`{"queryType":"slo","family":"ttft","threshold":0.5,"target":%g,"window":"1h","grouping":"instance"}`, target)
			q := backend.DataQuery{RefID: "S", JSON: json.RawMessage(js), Interval: time.Second, MaxDataPoints: 1000,
				TimeRange: backend.TimeRange{From: at.Add(-10 * time.Second), To: at}}
			r := run(t, e, q).Responses["S"]
			require.NoError(t, r.Error)
			frames := byName(r.Frames)
			for _, inst := range []string{"flare", "healed"} {
				for _, p := range vllm.BurnPairs {
					long, err := interval.ParseDuration(p.Long)
					require.NoError(t, err)
					short, err := interval.ParseDuration(p.Short)
					require.NoError(t, err)
					lb, sb := h.burn(inst, at, long, budget), h.burn(inst, at, short, budget)
					require.Greater(t, math.Abs(lb-sb), 0.02, "%s %s: the data tells the two windows apart", inst, p.Name())
					name := inst + ":8000 " + p.Name()
					f := frames[name]
					require.NotNil(t, f, "frames: %v", keys(frames))
					got := valueAt(t, f, at)
					require.InDelta(t, math.Min(lb, sb), got, 1e-9, "%s: min(long %g, short %g)", name, lb, sb)
				}
			}
		})
	}
}

// valueAt is f's value at ts.
func valueAt(t *testing.T, f *data.Frame, ts time.Time) float64 {
	t.Helper()
	for i := 0; i < f.Rows(); i++ {
		if f.Fields[0].At(i).(time.Time).Equal(ts) {
			return f.Fields[1].At(i).(float64)
		}
	}
	t.Fatalf("%s has no point at %s", f.Name, ts)
	return 0
}
