//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The young-series correction (vllm's youngRateUnion) on every back end:
// a 5s window over a 1s scrape, so an old series wrongly scaled by
// window ÷ (window − scrape) would read 1.25× high.
const (
	yrWindow = 5 * time.Second
	yrScrape = time.Second
	// yrYoungRate is the young counter's true rate, per second.
	yrYoungRate = 7.0
)

// TestYoungRateFactor: a series at least the window old gets exactly
// plain rate() (a factor of 1, at step-aligned and unaligned evaluation
// times), and a series younger than the window still reads its true
// rate rather than rate()'s increase ÷ the whole window.
func TestYoungRateFactor(t *testing.T) {
	t.Parallel()
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			youngRateOn(t, k)
		})
	}
}

// youngRateOn runs TestYoungRateFactor on one back end, scraping an old
// and a young counter every second.
func youngRateOn(t *testing.T, k promtest.Kind) {
	c := &yrCounters{start: time.Now()}
	p := promtest.Start(t, promtest.Options{Targets: []string{c.serve(t)}, Backend: k, ScrapeInterval: yrScrape})
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance", Resolution: "1s"}
	built := b.PreemptionRate(models.GroupInstanceEngine, models.Filters{}, "5s")
	plain := `sum by (instance, engine) (rate(vllm:num_preemptions_total[5s]))`

	oldFirst := yrFirstSample(t, p, "old", 30*time.Second)
	// The young series appears once the old one is older than window +
	// scrape, and is checked while it is 2.5s to 3.5s old.
	c.youngAt.Store(time.Now().Add(yrWindow + 2*yrScrape).UnixNano())
	youngFirst := yrFirstSample(t, p, "young", 30*time.Second)
	time.Sleep(time.Until(youngFirst.Add(yrWindow + 2*yrScrape)))
	require.Greater(t, youngFirst.Sub(oldFirst), yrWindow+yrScrape)

	t.Run("old series: factor 1", func(t *testing.T) {
		for _, at := range yrTimes(oldFirst.Add(yrWindow+yrScrape), oldFirst) {
			got, want := yrQuery(t, p, built, at)["old"], yrQuery(t, p, plain, at)["old"]
			require.Positive(t, want, "plain rate at %s", yrStamp(at))
			t.Logf("%s at %s: builder %.6g, rate() %.6g, factor %.6f", k, yrStamp(at), got, want, got/want)
			require.InEpsilon(t, want, got, 1e-9, "old series at %s", yrStamp(at))
		}
	})

	t.Run("young series: true rate", func(t *testing.T) {
		for _, age := range []time.Duration{2500 * time.Millisecond, 3 * time.Second, 3500 * time.Millisecond} {
			at := youngFirst.Add(age)
			got, raw := yrQuery(t, p, built, at)["young"], yrQuery(t, p, plain, at)["young"]
			t.Logf("%s %s after the first sample: builder %.3f/s, rate() %.3f/s, true %.1f/s", k, age, got, raw, yrYoungRate)
			if k == promtest.VictoriaMetrics {
				// Its rate() divides by the time between the samples it
				// saw, not by the window, so it needs no correction and
				// the builder's reads window ÷ age high: a known gap of
				// the correction, logged here, not asserted. (How close
				// VictoriaMetrics' own rate() is to the truth depends on
				// scrape jitter over 2-3 samples: 7.6/s for 7/s under load.)
				// What holds on every back end: the correction only scales up.
				require.Positive(t, raw, "young series %s old, VictoriaMetrics' rate()", age)
				require.GreaterOrEqual(t, got, raw, "young series %s old: the correction never lowers a rate", age)
				continue
			}
			// The counter is 0 at its first sample, so rate() extrapolates
			// nothing before it and the correction is exact up to the
			// scrape's few milliseconds between handler and timestamp.
			require.InEpsilon(t, yrYoungRate, got, 0.05, "young series %s old", age)
			require.Less(t, raw, 0.8*yrYoungRate, "rate() alone reads low %s old", age)
		}
	})
}

// yrTimes are evaluation times from after: on whole seconds (the
// subquery's step grid), between them, and 50ms and 300ms before a
// sample's time plus the window, so the window starts just before a
// sample: there a subquery's first step after the window's start finds
// that sample, inside the window, unless a step at or before the start
// is in range.
func yrTimes(after, sample time.Time) []time.Time {
	var out []time.Time
	base := after.Truncate(time.Second).Add(time.Second)
	scrape := sample.Add(yrWindow)
	for scrape.Before(base) {
		scrape = scrape.Add(yrScrape)
	}
	for i := 0; i < 3; i++ {
		s, d := base.Add(time.Duration(i)*time.Second), time.Duration(i)*yrScrape
		out = append(out, s, s.Add(370*time.Millisecond), s.Add(810*time.Millisecond),
			scrape.Add(d-50*time.Millisecond), scrape.Add(d-300*time.Millisecond))
	}
	return out
}

// yrStamp is a time as the query API's Unix seconds.
func yrStamp(at time.Time) string {
	return strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64)
}

// yrCounters serves two preemption counters: "old" from the start, with a
// rate that varies, and "young" from the first scrape after youngAt (Unix
// ns; 0 = not yet), 0 then and rising yrYoungRate per second.
type yrCounters struct {
	start     time.Time
	youngAt   atomic.Int64
	youngZero atomic.Int64
}

// young is the young counter's value now, and whether it is served yet.
func (c *yrCounters) young(now time.Time) (float64, bool) {
	if y := c.youngAt.Load(); y == 0 || now.UnixNano() < y {
		return 0, false
	}
	c.youngZero.CompareAndSwap(0, now.UnixNano())
	return yrYoungRate * now.Sub(time.Unix(0, c.youngZero.Load())).Seconds(), true
}

func (c *yrCounters) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		s := now.Sub(c.start).Seconds()
		w.Header().Set("Content-Type", promtest.ContentType)
		fmt.Fprintf(w, "# TYPE vllm:num_preemptions_total counter\n")
		fmt.Fprintf(w, "vllm:num_preemptions_total{engine=\"old\",model_name=\"m\"} %g\n", 40+5*s+3*math.Sin(s))
		if v, ok := c.young(now); ok {
			fmt.Fprintf(w, "vllm:num_preemptions_total{engine=\"young\",model_name=\"m\"} %g\n", v)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// yrFirstSample waits for the engine's series and returns the time of its
// first stored sample.
func yrFirstSample(t *testing.T, p *promtest.Server, engine string, timeout time.Duration) time.Time {
	t.Helper()
	sel := `vllm:num_preemptions_total{engine="` + engine + `"}[1m]`
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, raw := range p.Query(t, sel) {
			var s struct {
				Values [][2]any `json:"values"`
			}
			require.NoError(t, json.Unmarshal(raw, &s))
			if len(s.Values) > 0 {
				sec, _ := s.Values[0][0].(float64)
				return time.UnixMilli(int64(math.Round(sec * 1e3)))
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: no sample of %q within %s", p.Backend, engine, timeout)
	return time.Time{}
}

// yrQuery runs an instant query at a time and returns its values by engine.
func yrQuery(t *testing.T, p *promtest.Server, expr string, at time.Time) map[string]float64 {
	t.Helper()
	q := url.Values{"query": {expr}, "time": {yrStamp(at)}}
	resp, err := http.Get(p.URL + "/api/v1/query?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "success", body.Status, "%s: %s", expr, body.Error)
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		out[r.Metric["engine"]] = v
	}
	return out
}
