package query_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// ruleProm is a store with vLLM's series and, from since on, the shipped
// recording rules evaluated every 30s on the minute's half; it records the
// range expressions it is asked.
type ruleProm struct {
	since time.Time
	mu    sync.Mutex
	asked []string
	names int // rule-name listings
	// warn is the warnings every range query answers with.
	warn []string
	// drop are parts of recorded names that have no series (a group
	// missing or partly loaded).
	drop []string
	// shared: two recorded p99 series share an engine's labels, and an
	// identity spans two of the stall state rule's servers (both checks
	// answer with a sample).
	shared bool
}

func (p *ruleProm) MetricNames(_ context.Context, sel string, _, _ time.Time) ([]string, error) {
	if strings.Contains(sel, "engine:") {
		p.mu.Lock()
		p.names++
		p.mu.Unlock()
		var out []string
		for _, n := range vllm.RuleNames("engine:") {
			if !slices.ContainsFunc(p.drop, func(d string) bool { return strings.Contains(n, d) }) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:time_to_first_token_seconds_bucket",
		"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count"}, nil
}

func (p *ruleProm) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	one := func(v float64) model.Vector { return model.Vector{{Value: model.SampleValue(v)}} }
	switch {
	case strings.Contains(expr, `up|engine:vllm_stalled:`) && p.shared && !ts.Before(p.since):
		return one(1), nil, nil
	case ts.Before(p.since), strings.Contains(expr, `pod!=""`):
		return nil, nil, nil
	case strings.HasPrefix(expr, "max(timestamp("):
		return one(float64(ts.Truncate(30 * time.Second).Unix())), nil, nil
	case strings.HasPrefix(expr, "count(engine:"):
		return one(4), nil, nil
	case strings.HasPrefix(expr, "count(count by") && p.shared:
		return one(2), nil, nil
	}
	return nil, nil, nil
}

func (p *ruleProm) QueryRange(_ context.Context, expr string, _ v1.Range) (prom.Matrix, []string, error) {
	p.mu.Lock()
	p.asked = append(p.asked, expr)
	p.mu.Unlock()
	return nil, p.warn, nil
}

func (p *ruleProm) exprs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.asked, "\n")
}

func TestRulePlanning(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	wait := `{"queryType":"waitTime","family":"ttft","quantiles":[0.99],"grouping":"model"}`
	tests := []struct {
		name, settings, query string
		step                  time.Duration
		rulesSince            time.Duration // before now
		want, notWant         string
		notice                bool
	}{
		{"step of the interval, 1m window", `{}`, wait, 30 * time.Second, 2 * time.Hour,
			"histogram_quantile(0.99, sum by (le, model_name) (engine:vllm_time_to_first_token_seconds_bucket:rate1m))", "rate(vllm:", true},
		{"step not a multiple of 30s", `{}`, wait, 15 * time.Second, 2 * time.Hour, "rate(vllm:time_to_first_token_seconds_bucket[60s])", "engine:", false},
		{"turned off", `{"recordingRules":false}`, wait, 30 * time.Second, 2 * time.Hour, "rate(vllm:", "engine:", false},
		{"range starts before the rules and the start probe finds none: raw (rulemix_test.go has the mixed plans)", `{}`, wait, 30 * time.Second, 30 * time.Minute, "rate(vllm:", "engine:", false},
		{"a renamed group", `{"rulePrefix":"fleet:"}`, wait, 30 * time.Second, 2 * time.Hour, "rate(vllm:", "engine:", false},
		{"topK by waiting", `{}`, `{"queryType":"topk","rankBy":"waiting","grouping":"instance"}`, 30 * time.Second, 2 * time.Hour,
			`label_replace(sum by (instance) (engine:vllm_num_requests_waiting:sum{instance=`, "sum by (instance) (vllm:num_requests_waiting", true},
		{"topK by KV usage stays raw", `{}`, `{"queryType":"topk","rankBy":"kv_usage","grouping":"instance"}`, 30 * time.Second, 2 * time.Hour,
			"avg by (instance) (", "engine:", false},
		{"queue running and waiting", `{}`, `{"queryType":"queue","grouping":"instance"}`, 30 * time.Second, 2 * time.Hour,
			"sum by (instance) (engine:vllm_num_requests_waiting:sum)", "(vllm:num_requests_running)", true},
		// The nearest policy: a 1m step rates over 75s, which exact leaves raw.
		{"exact: a 75s window stays raw", `{"recordingRules":"exact"}`, wait, time.Minute, 2 * time.Hour,
			"rate(vllm:time_to_first_token_seconds_bucket[75s])", "engine:", false},
		{"nearest: a 75s window reads the 1m rules", `{"recordingRules":"nearest"}`, wait, time.Minute, 2 * time.Hour,
			"engine:vllm_time_to_first_token_seconds_bucket:rate1m", "rate(vllm:", true},
		{"nearest: a 45s step", `{"recordingRules":"nearest"}`, wait, 45 * time.Second, 2 * time.Hour,
			"engine:vllm_time_to_first_token_seconds_bucket:rate1m", "rate(vllm:", true},
		{"nearest: a 15s step stays raw", `{"recordingRules":"nearest"}`, wait, 15 * time.Second, 2 * time.Hour,
			"rate(vllm:time_to_first_token_seconds_bucket[60s])", "engine:", false},
		{"nearest: queue at a 45s step", `{"recordingRules":"nearest"}`, `{"queryType":"queue","grouping":"instance"}`, 45 * time.Second, 2 * time.Hour,
			"sum by (instance) (engine:vllm_num_requests_waiting:sum)", "(vllm:num_requests_running)", true},
		{"nearest: topK by p99 at a 2m step reads 5m", `{"recordingRules":"nearest"}`, `{"queryType":"topk","rankBy":"wait_p99","grouping":"instance"}`,
			2 * time.Minute, 2 * time.Hour, "engine:vllm_request_queue_time_seconds_bucket:rate5m", "rate(vllm:request_queue_time_seconds_bucket", true},
		{"nearest, range before the rules and no start found: raw", `{"recordingRules":"nearest"}`, wait, time.Minute, 30 * time.Minute,
			"rate(vllm:", "engine:", false},
		{"off by name", `{"recordingRules":"off"}`, wait, 30 * time.Second, 2 * time.Hour, "rate(vllm:", "engine:", false},
		// The preemption rate corrects young series (preemptionRate),
		// which the recorded rates cannot: raw under both policies.
		{"preemption rate by model stays raw", `{}`, preemptRate("model"), 30 * time.Second, 2 * time.Hour,
			"sum by (model_name) ((rate(vllm:num_preemptions_total[60s]) * ", "engine:", false},
		{"preemption rate by instance stays raw", `{}`, preemptRate("instance"), 30 * time.Second, 2 * time.Hour,
			"sum by (instance) ((rate(vllm:num_preemptions_total[60s])", "engine:", false},
		{"nearest: preemption rate stays raw", `{"recordingRules":"nearest"}`, preemptRate("none"), time.Minute, 2 * time.Hour,
			"sum((rate(vllm:num_preemptions_total[75s])", "engine:", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-tt.rulesSince)}
			r := runOnRuleProm(t, fp, tt.settings, tt.query, tt.step, now)
			require.NoError(t, r.Error)
			require.Contains(t, fp.exprs(), tt.want)
			require.NotContains(t, fp.exprs(), tt.notWant)
			if tt.notice {
				require.Contains(t, noticeTexts(r.Frames), "Answered from recording rules (engine:…, every 30s)")
				close := strings.Contains(tt.settings, "nearest") && tt.step != 30*time.Second
				require.Equal(t, close, strings.Contains(noticeTexts(r.Frames), "close rather than exact"))
			} else {
				require.NotContains(t, noticeTexts(r.Frames), "recording rules")
			}
		})
	}
}

// preemptRate is the preemptions query as a rate by grouping.
func preemptRate(grouping string) string {
	return `{"queryType":"preemptions","asSeries":true,"grouping":"` + grouping + `"}`
}

// TestPreemptionWarnings: Prometheus' warnings reach the preemptions
// answer as warning notices, as annotations and as a rate alike.
func TestPreemptionWarnings(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct{ name, query string }{
		{"annotations", `{"queryType":"preemptions"}`},
		{"rate", preemptRate("model")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-2 * time.Hour), warn: []string{" partial response: store b down "}}
			s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
			require.NoError(t, err)
			e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
				Now: func() time.Time { return now }}
			r := run(t, e, dq("A", tt.query, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			require.NotEmpty(t, r.Frames)
			var warned []string
			for _, f := range r.Frames {
				if f.Meta == nil {
					continue
				}
				for _, n := range f.Meta.Notices {
					if n.Severity == data.NoticeSeverityWarning && strings.HasPrefix(n.Text, "Prometheus: ") {
						warned = append(warned, n.Text)
					}
				}
			}
			require.Equal(t, []string{"Prometheus: partial response: store b down"}, warned)
		})
	}
}

// TestRuleDiscoveryIsCached: the rule names are listed once per RulesTTL,
// not per query, and not at all with recordingRules off.
func TestRuleDiscoveryIsCached(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	fp := &ruleProm{since: now.Add(-2 * time.Hour)}
	d := query.NewRuleDiscovery(fp, vllm.Builder{}, "engine:", func() time.Time { return now })
	for range 3 {
		rs := d.Get(context.Background())
		require.Equal(t, 30*time.Second, rs.Interval)
		require.Len(t, rs.Present, 145)
		require.False(t, rs.PodSeries)
	}
	require.Equal(t, 1, fp.names)
	d.Invalidate()
	d.Get(context.Background())
	require.Equal(t, 2, fp.names)
}

// TestFleetOnRules: the fleet table reads the load gauges, rates and p99s
// from the rules when they answer its instant exactly (or closely, under
// nearest), and stays raw otherwise. Its instant is the range's end: rules
// younger than the range but running at its end answer it; a table whose
// end is before the rules began is raw.
func TestFleetOnRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name, settings string
		interval       time.Duration
		rulesSince     time.Duration
		want, notWant  []string
		// endsAgo is how long before now the table's range ends.
		endsAgo time.Duration
		// drop and shared are the store's (ruleProm); notice is a notice
		// the answer must carry.
		drop   []string
		shared bool
		notice string
	}{
		{"exact, 1m window", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"sum by (instance, engine, model_name) (engine:vllm_num_requests_running:sum)",
				"max by (instance, engine, model_name) (engine:vllm_time_to_first_token_seconds:p99_rate1m)",
				"max by (instance, engine, model_name) (engine:vllm_request_queue_time_seconds:p99_rate1m)",
				"60 * sum by (instance, engine, model_name) (engine:vllm_num_preemptions:rate1m)",
				"max by (instance, engine, model_name) (engine:vllm_stalled:3m > 0)", // the stall state, whole
				"last_over_time("}, // seen stays raw
			[]string{"sum by (instance, engine, model_name) (vllm:num_requests_running)", "rate(vllm:request_queue_time_seconds_bucket",
				"min_over_time(", "increase(", "count_over_time("}, 0, nil, false, ""},
		// shared: the store also answers the stall state's check (an
		// identity spanning two of the rule's servers) with a sample.
		{"engine labels shared by two recorded p99s and servers: the bucket rates, the stall inputs", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"histogram_quantile(0.99, sum by (le, instance, engine, model_name) (engine:vllm_time_to_first_token_seconds_bucket:rate1m))",
				"sum by (instance, engine, model_name) (engine:vllm_num_requests_waiting:min_over_time3m)",
				"sum by (instance, engine, model_name) (engine:vllm_request_success:increase3m) > 0",
				"count_over_time(vllm:num_requests_running[180s] offset 180s)"}, // reported before: raw
			[]string{":p99_rate1m", "rate(vllm:request_queue_time_seconds_bucket", "engine:vllm_stalled:", "min_over_time(vllm:", "increase(vllm:"},
			0, nil, true, ""},
		{"the p99 group missing: the bucket rates", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"histogram_quantile(0.99, sum by (le, instance, engine, model_name) (engine:vllm_request_queue_time_seconds_bucket:rate1m))"},
			[]string{":p99_rate1m"}, 0, []string{":p99_"}, false, ""},
		{"the stall state missing (an older rule file): the recorded inputs, which answer the same", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"engine:vllm_num_requests_running:min_over_time3m", "engine:vllm_num_requests_running:sum"},
			[]string{"min_over_time(vllm:num_requests_running", "engine:vllm_stalled:"}, 0, []string{"_stalled:3m"}, false, ""},
		{"the stall state's window missing and an input with it: raw, and said", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"min_over_time(vllm:num_requests_running[180s])"}, []string{"engine:vllm_stalled:"}, 0, []string{"_stalled:3m", "waiting:min_over_time3m"}, false,
			"The fleet table's stall state read raw series: the recording rule group vllm.recording.stall is missing or partly loaded " +
				"(no series for engine:vllm_num_requests_waiting:min_over_time3m)"},
		{"an input missing, the state recorded: the state", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"engine:vllm_stalled:3m > 0"}, []string{"min_over_time(", "count_over_time("}, 0, []string{"waiting:min_over_time3m"}, false, ""},
		{"an input the fleet does not export (no prompt-token counter here) is not required", `{}`, 30 * time.Second, 2 * time.Hour,
			[]string{"engine:vllm_prompt_tokens:increase3m", "engine:vllm_num_requests_running:min_over_time3m"},
			[]string{"min_over_time(vllm:", "engine:vllm_stalled:"}, 0, []string{"prompt_tokens:increase3m"}, true, ""},
		{"a stall window the rules do not record", `{"stallWindow":"2m"}`, 30 * time.Second, 2 * time.Hour,
			[]string{"min_over_time(vllm:num_requests_running[120s])", "engine:vllm_num_requests_running:sum"},
			[]string{":min_over_time", ":increase"}, 0, nil, false, ""},
		{"exact, 75s window: the rates raw, the stall state on rules", `{}`, time.Minute, 2 * time.Hour,
			[]string{"rate(vllm:request_queue_time_seconds_bucket[75s])", "engine:vllm_stalled:3m > 0"},
			[]string{"engine:vllm_num_requests_running:sum", ":rate1m", ":p99_"}, 0, nil, false, ""},
		{"nearest, 75s window reads 1m", `{"recordingRules":"nearest"}`, time.Minute, 2 * time.Hour,
			[]string{"engine:vllm_request_success:rate1m"}, []string{"rate(vllm:request_queue_time_seconds_bucket"}, 0, nil, false, ""},
		{"off", `{"recordingRules":"off"}`, 30 * time.Second, 2 * time.Hour, []string{"rate(vllm:"}, []string{"engine:"}, 0, nil, false, ""},
		{"rules younger than the range, running at its end", `{}`, 30 * time.Second, 30 * time.Minute,
			[]string{"sum by (instance, engine, model_name) (engine:vllm_num_requests_running:sum)", "engine:vllm_request_success:rate1m",
				"last_over_time(vllm:num_requests_running[3660s])"}, // seen stays raw, over the whole range
			[]string{"sum by (instance, engine, model_name) (vllm:num_requests_running)"}, 0, nil, false, ""},
		{"rules begun inside the table's last step", `{}`, 30 * time.Second, 10 * time.Second,
			[]string{"engine:vllm_num_requests_waiting:sum"}, []string{"sum by (instance, engine, model_name) (vllm:num_requests_waiting)"}, 0, nil, false, ""},
		{"a table that ends before the rules began", `{}`, 30 * time.Second, 30 * time.Minute,
			[]string{"rate(vllm:", "sum by (instance, engine, model_name) (vllm:num_requests_running)"}, []string{"engine:"}, 40 * time.Minute, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-tt.rulesSince), drop: tt.drop, shared: tt.shared}
			s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(tt.settings)})
			require.NoError(t, err)
			e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
				Now: func() time.Time { return now }}
			q := dq("A", `{"queryType":"fleet"}`, now.Add(-time.Hour-tt.endsAgo), now.Add(-tt.endsAgo))
			q.Interval = tt.interval
			r := run(t, e, q).Responses["A"]
			require.NoError(t, r.Error)
			require.NotEmpty(t, r.Frames)
			require.NotNil(t, r.Frames[0].Meta)
			exprs := r.Frames[0].Meta.ExecutedQueryString
			for _, w := range tt.want {
				require.Contains(t, exprs, w)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, exprs, w)
			}
			onRules := strings.Contains(exprs, "engine:")
			require.Equal(t, onRules, strings.Contains(noticeTexts(r.Frames), "Answered from recording rules (engine:…, every 30s)"))
			if tt.notice != "" {
				require.Contains(t, noticeTexts(r.Frames), tt.notice)
			} else {
				require.NotContains(t, noticeTexts(r.Frames), "read raw series", "no group is missing")
			}
		})
	}
}

// runOnRuleProm answers qjson over the hour before now at step, with the
// data source settings given, against fp (rules as fp says).
func runOnRuleProm(t *testing.T, fp *ruleProm, settings, qjson string, step time.Duration, now time.Time) backend.DataResponse {
	t.Helper()
	s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(settings)})
	require.NoError(t, err)
	e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
		Now: func() time.Time { return now }}
	q := dq("A", qjson, now.Add(-time.Hour), now)
	q.Interval = step
	return run(t, e, q).Responses["A"]
}
