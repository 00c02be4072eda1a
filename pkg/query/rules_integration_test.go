//go:build !mutation

package query_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/health"
	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// ruleTestEvery is the evaluation interval of the test copy of the rule
// file (30s shipped): the test's queries step 15s, a multiple of it.
const ruleTestEvery = 5 * time.Second

// ruleCase is one query asked with rules on and off.
type ruleCase struct {
	name, query string
	// settings are jsonData besides scrapeInterval and recordingRules.
	settings string
	// onRules: whether the rules may answer it (else both plans are raw).
	onRules bool
}

// ruleCases run on a fleet whose cluster "b" servers carry namespace and
// pod labels (as on Kubernetes) and whose cluster "a" servers do not: the
// recorded series of the first keep pod and lose instance.
var ruleCases = []ruleCase{
	{"ttft quantiles by pod", `{"queryType":"waitTime","family":"ttft","quantiles":[0.5,0.9,0.99],"grouping":"instance"}`, `,"instanceLabel":"pod"`, true},
	{"queue time by model", `{"queryType":"waitTime","family":"queue_time","quantiles":[0.99],"grouping":"model"}`, "", true},
	{"e2e fleet-wide", `{"queryType":"waitTime","family":"e2e","quantiles":[0.5],"grouping":"none"}`, "", true},
	{"itl by pod and engine, filtered to a cluster", `{"queryType":"waitTime","family":"itl","quantiles":[0.95],"grouping":"instance_engine","matchers":"cluster=\"b\""}`, `,"instanceLabel":"pod"`, true},
	{"ttft under a cluster selector", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`, `,"selector":"cluster=\"a\""`, true},
	{"queue by pod", `{"queryType":"queue","grouping":"instance"}`, `,"instanceLabel":"pod"`, true},
	{"queue by model", `{"queryType":"queue","grouping":"model"}`, "", true},
	{"topK by waiting per pod", `{"queryType":"topk","rankBy":"waiting","k":10,"aggregation":"max","grouping":"instance","format":"series"}`, `,"instanceLabel":"pod"`, true},
	{"topK by queue-time p99 per pod and engine", `{"queryType":"topk","rankBy":"wait_p99","k":10,"aggregation":"avg","grouping":"instance_engine","format":"series"}`, `,"instanceLabel":"pod"`, true},
	{"topK by KV usage, which no rule records exactly", `{"queryType":"topk","rankBy":"kv_usage","k":10,"grouping":"instance","format":"series"}`, `,"instanceLabel":"pod"`, false},
	{"by instance, which pods' recorded series lose", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"instance"}`, "", false},
	{"a job selector the rules sum away", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`, `,"selector":"job=\"vllm\""`, false},
	{"a matcher on a label the rules drop", `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model","matchers":"job=\"vllm\""}`, "", false},
}

// TestRulesExactness checks issue 22 item 3 on Prometheus 2 and 3 and
// VictoriaMetrics: with the shipped recording rules' series in the store,
// the plugin's rules-backed answer has the raw answer's series and steps,
// and its values equal the raw expressions' at the rules' evaluation times
// (within float tolerance), for histogram quantiles, groupings, a filter
// and a scoping selector; where the rules cannot answer, and with
// recordingRules off, the plan is raw. Discovery finds every name and the
// interval.
//
// The rule series are evaluated after the fact over the scraped range, by
// promtool (BackfillRules) and vmalert's replay mode (ReplayRules), from a
// copy of the rule file evaluated every 5s: a live group can evaluate a
// few milliseconds before a scrape stamped earlier is stored, and then
// differs from any later raw query.
func TestRulesExactness(t *testing.T) {
	t.Parallel()
	env := fleettest.Run(t, fleettest.HotFleet(22))
	tg := env.Targets()
	groups := []promtest.Group{{Targets: tg[:2], Labels: map[string]string{"cluster": "a"}}}
	for i, addr := range tg[2:] {
		groups = append(groups, promtest.Group{Targets: []string{addr},
			Labels: map[string]string{"cluster": "b", "namespace": "inference", "pod": fmt.Sprintf("vllm-%d", i)}})
	}
	servers := map[promtest.Kind]*promtest.Server{}
	for _, k := range promtest.Kinds() {
		o := promtest.Options{Groups: groups, Backend: k}
		if k != promtest.VictoriaMetrics {
			o.Args = []string{"--web.enable-admin-api"} // for BackfillRules' snapshot
		}
		servers[k] = promtest.Start(t, o)
	}
	ruleFile := promtest.RuleFileEvery(t, ruleTestEvery)
	time.Sleep(time.Until(env.Started.Add(150 * time.Second)))
	bfStart := env.Started.Add(5 * time.Second).Truncate(ruleTestEvery).Add(ruleTestEvery)
	bfEnd := time.Now().Add(-5 * time.Second).Truncate(ruleTestEvery)
	for _, k := range promtest.Kinds() {
		t.Run(k.Name(), func(t *testing.T) {
			srv := servers[k]
			// The last evaluation may fall before bfEnd (promtool stops short
			// of its end), so the queries end an interval earlier.
			if k == promtest.VictoriaMetrics {
				srv.ReplayRules(t, ruleFile, bfStart, bfEnd)
			} else {
				srv.BackfillRules(t, ruleFile, bfStart, bfEnd)
			}
			c, err := prom.New(prom.Options{URL: srv.URL})
			require.NoError(t, err)
			rs := query.NewRuleDiscovery(c, vllm.Builder{}, "engine:", time.Now).Get(context.Background())
			require.Len(t, rs.Present, len(vllm.RuleNames("engine:")), "discovery finds every recorded name")
			require.Equal(t, ruleTestEvery, rs.Interval, "discovery measures the interval")
			require.True(t, rs.PodSeries, "discovery sees the pod-labelled series")
			s, err := models.LoadSettings(context.Background(), backend.DataSourceInstanceSettings{URL: srv.URL, JSONData: []byte(`{"scrapeInterval":"1s"}`)})
			require.NoError(t, err)
			require.Contains(t, health.Check(context.Background(), c, s, time.Now()).Message, "Recording rules: 53 of 53 present, every 5s")
			for _, c := range ruleCases {
				t.Run(c.name, func(t *testing.T) {
					checkRuleCase(t, srv.URL, c, bfStart.Add(20*time.Second), bfEnd.Add(-ruleTestEvery))
				})
			}
		})
	}
}

// checkRuleCase asks c with rules on and off and compares the answers.
func checkRuleCase(t *testing.T, url string, c ruleCase, from, to time.Time) {
	on := settingsExecutor(t, url, `{"scrapeInterval":"15s"`+c.settings+`}`)
	off := settingsExecutor(t, url, `{"scrapeInterval":"15s","recordingRules":false`+c.settings+`}`)
	q := dq("A", c.query, from, to)
	// Grafana's interval 15s: the step, three evaluations; $__rate_interval
	// is then max(15s + 15s, 4 × 15s) = 1m, the recorded window.
	q.Interval = 15 * time.Second
	rOn, rOff := run(t, on, q).Responses["A"], run(t, off, q).Responses["A"]
	require.NoError(t, rOn.Error)
	require.NoError(t, rOff.Error)
	require.NotEmpty(t, rOff.Frames)
	require.NotContains(t, executed(rOff.Frames), "engine:", "recordingRules off plans raw")
	if !c.onRules {
		require.NotContains(t, executed(rOn.Frames), "engine:", "the rules cannot answer this exactly")
		return
	}
	require.Contains(t, executed(rOn.Frames), "engine:vllm_", "planned on rules")
	require.Contains(t, noticeTexts(rOn.Frames), "Answered from recording rules (engine:…, every 5s)")
	requireSameShape(t, rOff.Frames, rOn.Frames)
	requireSameValues(t, url, expressions(rOff.Frames), expressions(rOn.Frames), rOn.Frames)
}

// requireSameValues evaluates each rules-backed expression over the
// frames' steps and its raw twin at the rules' evaluation times: a rule
// group evaluates at a phase of its own inside its interval (Prometheus
// derives it from the group's name and file; promtool's backfill keeps
// it; vmalert aligns to the interval), so the rules' value at a step is
// the raw answer at the latest evaluation at or before it. With steps a
// multiple of the interval the lag is the same at every step.
func requireSameValues(t *testing.T, url string, raw, rules []string, fs data.Frames) {
	t.Helper()
	c, err := prom.New(prom.Options{URL: url})
	require.NoError(t, err)
	require.Equal(t, len(raw), len(rules))
	times := fs[0].Fields[0]
	start, end := times.At(0).(time.Time), times.At(times.Len()-1).(time.Time)
	step := times.At(1).(time.Time).Sub(start)
	ctx := context.Background()
	compared := 0
	for i := range rules {
		if rules[i] == raw[i] {
			continue // a signal no rule records (queue's waiting_by_reason)
		}
		if strings.HasPrefix(rules[i], "topk(") {
			// topK's ranking: its subquery steps on multiples of the step
			// whatever the evaluation time, so it cannot be shifted by the
			// lag; k covers every group, so it picks the same ones.
			continue
		}
		lag := ruleLag(t, c, rules[i], start)
		got, _, err := c.QueryRange(ctx, rules[i], v1.Range{Start: start, End: end, Step: step})
		require.NoError(t, err)
		want, _, err := c.QueryRange(ctx, raw[i], v1.Range{Start: start.Add(-lag), End: end.Add(-lag), Step: step})
		require.NoError(t, err)
		compared += requireSameMatrix(t, want, got, lag)
	}
	require.Positive(t, compared, "some values compared")
}

var ruleNameRE = regexp.MustCompile(`engine:[a-z0-9_]+:[a-z0-9]+`)

// ruleLag is how long before at the rules read by expr were last evaluated.
func ruleLag(t *testing.T, c *prom.Client, expr string, at time.Time) time.Duration {
	t.Helper()
	name := ruleNameRE.FindString(expr)
	v, _, err := c.Query(context.Background(), "max(timestamp("+name+"))", at)
	require.NoError(t, err)
	require.NotEmpty(t, v, name)
	lag := at.Sub(time.UnixMilli(int64(float64(v[0].Value)*1000 + 0.5)))
	require.True(t, lag >= 0 && lag < ruleTestEvery, "lag %s", lag)
	return lag
}

// requireSameMatrix: the same series, each with the same number of points
// and values within a relative 1e-9 (sums in another order).
func requireSameMatrix(t *testing.T, want, got prom.Matrix, lag time.Duration) int {
	t.Helper()
	w, g := bySeries(want), bySeries(got)
	require.Equal(t, sortedKeys(w), sortedKeys(g), "same series")
	n := 0
	for k, ws := range w {
		gs := g[k]
		require.Equal(t, len(ws.Values), len(gs.Values), "%s: same steps", k)
		for j, wv := range ws.Values {
			require.Equal(t, ws.Times[j].Add(lag), gs.Times[j])
			require.InDelta(t, wv, gs.Values[j], 1e-9*math.Max(1, math.Abs(wv)), "%s at %v (raw at %v)", k, gs.Times[j], ws.Times[j])
			n++
		}
	}
	return n
}

func bySeries(m prom.Matrix) map[string]*prom.Series {
	out := map[string]*prom.Series{}
	for _, s := range m {
		out[model.LabelSet(toLabelSet(s.Labels)).String()] = s
	}
	return out
}

func toLabelSet(ls map[string]string) model.LabelSet {
	out := model.LabelSet{}
	for k, v := range ls {
		out[model.LabelName(k)] = model.LabelValue(v)
	}
	return out
}

// expressions are the expressions the frames' executed query holds, one
// per line between "Expr: " and "Step:".
func expressions(fs data.Frames) []string {
	s := fs[0].Meta.ExecutedQueryString
	s = strings.TrimPrefix(s, "Expr: ")
	s = s[:strings.Index(s, "\nStep:")]
	return strings.Split(s, "\n")
}

func executed(fs data.Frames) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Meta != nil {
			b.WriteString(f.Meta.ExecutedQueryString + "\n")
		}
	}
	return b.String()
}

// requireSameShape: the same series (name and labels) at the same steps.
func requireSameShape(t *testing.T, want, got data.Frames) {
	t.Helper()
	w, g := frameIndex(want), frameIndex(got)
	require.Equal(t, sortedKeys(w), sortedKeys(g), "same series")
	for k, wf := range w {
		gf := g[k]
		require.Equal(t, wf.Rows(), gf.Rows(), "%s: same steps", k)
		for i := range wf.Rows() {
			require.Equal(t, wf.Fields[0].At(i), gf.Fields[0].At(i), "%s: step %d", k, i)
		}
	}
}

func frameIndex(fs data.Frames) map[string]*data.Frame {
	out := map[string]*data.Frame{}
	for _, f := range fs {
		if len(f.Fields) < 2 {
			continue
		}
		out[f.Name+" "+f.Fields[1].Labels.String()] = f
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
