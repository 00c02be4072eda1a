package query_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// scripted is a Prometheus for unit tests of the executor's own logic: it
// answers with functions of the request and remembers what was asked.
type scripted struct {
	mu      sync.Mutex
	ranges  []v1.Range
	exprs   []string
	instant func(expr string, ts time.Time) model.Vector
	matrix  func(expr string, r v1.Range) model.Matrix
}

func (s *scripted) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	if s.instant == nil {
		return model.Vector{}, nil, nil
	}
	return s.instant(expr, ts), nil, nil
}

func (s *scripted) QueryRange(_ context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r)
	s.exprs = append(s.exprs, expr)
	s.mu.Unlock()
	if s.matrix == nil {
		return prom.Matrix{}, nil, nil
	}
	return fromModel(s.matrix(expr, r)), nil, nil
}

// fromModel turns a client_golang matrix into the client's columns.
func fromModel(m model.Matrix) prom.Matrix {
	out := make(prom.Matrix, 0, len(m))
	for _, ss := range m {
		s := &prom.Series{Labels: map[string]string{}}
		for k, v := range ss.Metric {
			s.Labels[string(k)] = string(v)
		}
		for _, p := range ss.Values {
			s.Times = append(s.Times, p.Timestamp.Time())
			s.Values = append(s.Values, float64(p.Value))
		}
		out = append(out, s)
	}
	return out
}

func (s *scripted) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}, nil
}

func scriptedExecutor(p query.Prometheus) *query.Executor {
	s := models.Settings{ScrapeInterval: time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:"}
	return &query.Executor{Prom: p, Settings: s, Detector: query.NewDetector(p, "vllm:", time.Now)}
}

// floats returns every float value of a response's frames.
func floats(frames data.Frames) []float64 {
	var out []float64
	for _, f := range frames {
		for _, fld := range f.Fields {
			for i := 0; i < fld.Len(); i++ {
				switch v := fld.At(i).(type) {
				case float64:
					out = append(out, v)
				case *float64:
					if v != nil {
						out = append(out, *v)
					}
				}
			}
		}
	}
	return out
}

// TestSameExpressionTwoSteps: two panels with the same query but different
// min steps are two range queries, each answered at its own step.
func TestSameExpressionTwoSteps(t *testing.T) {
	p := &scripted{matrix: func(_ string, r v1.Range) model.Matrix {
		// The answer says which step it was asked at.
		return model.Matrix{{Metric: model.Metric{"instance": "a", "__signal__": "waiting"},
			Values: []model.SamplePair{{Timestamp: model.TimeFromUnixNano(r.Start.UnixNano()), Value: model.SampleValue(r.Step.Seconds())}}}}
	}}
	e := scriptedExecutor(p)
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	from := to.Add(-time.Hour)
	resp := run(t, e,
		dq("A", `{"queryType":"promql","expr":"vllm:num_requests_waiting","interval":"10s"}`, from, to),
		dq("B", `{"queryType":"promql","expr":"vllm:num_requests_waiting","interval":"30s"}`, from, to),
	)
	require.Len(t, p.ranges, 2, "one range query per step")
	require.Equal(t, p.exprs[0], p.exprs[1], "the same expression")
	for ref, want := range map[string]float64{"A": 10, "B": 30} {
		r := resp.Responses[ref]
		require.NoError(t, r.Error, ref)
		require.Equal(t, []float64{want}, floats(r.Frames), "%s is answered at its own step", ref)
	}
}

// TestRangeSentToPrometheus: the range query covers the dashboard's range
// aligned down to the step, and the instant ranking query of topk is
// evaluated at the range end.
func TestRangeSentToPrometheus(t *testing.T) {
	var instants []time.Time
	var mu sync.Mutex
	p := &scripted{instant: func(_ string, ts time.Time) model.Vector {
		mu.Lock()
		instants = append(instants, ts)
		mu.Unlock()
		return model.Vector{}
	}}
	e := scriptedExecutor(p)
	from := time.Date(2026, 11, 30, 11, 0, 7, 0, time.UTC)
	to := time.Date(2026, 11, 30, 12, 0, 22, 0, time.UTC)
	for _, js := range []string{`{"queryType":"queue","interval":"15s"}`, `{"queryType":"waitTime","interval":"15s"}`,
		`{"queryType":"preemptions","interval":"15s"}`, `{"queryType":"preemptions","asSeries":true,"interval":"15s"}`,
		`{"queryType":"promql","expr":"up","interval":"15s"}`, `{"queryType":"topk","interval":"15s"}`} {
		p.ranges, instants = nil, nil
		r := run(t, e, dq("A", js, from, to)).Responses["A"]
		require.NoError(t, r.Error, js)
		require.NotEmpty(t, p.ranges, js)
		for _, got := range p.ranges { // queue asks for each signal on its own
			require.Equal(t, v1.Range{Start: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC),
				End: time.Date(2026, 11, 30, 12, 0, 15, 0, time.UTC), Step: 15 * time.Second}, got, js)
		}
		if strings.Contains(js, "topk") {
			require.Equal(t, []time.Time{p.ranges[0].End}, instants, "ranked at the range end")
		}
	}
}

// panicky panics on range queries of one expression.
type panicky struct {
	scripted
	on string
}

func (p *panicky) QueryRange(ctx context.Context, expr string, r v1.Range) (prom.Matrix, []string, error) {
	if strings.Contains(expr, p.on) {
		panic("boom in " + p.on)
	}
	return p.scripted.QueryRange(ctx, expr, r)
}

// TestPanicIsThatQuerysPluginError: a query that panics answers with a
// plugin error naming the panic; the other queries of the request answer.
func TestPanicIsThatQuerysPluginError(t *testing.T) {
	e := scriptedExecutor(&panicky{on: "num_requests_waiting"})
	now := time.Now()
	resp := run(t, e,
		dq("A", `{"queryType":"queue"}`, now.Add(-time.Hour), now),
		dq("B", `{"queryType":"promql","expr":"up"}`, now.Add(-time.Hour), now),
	)
	a := resp.Responses["A"]
	require.Error(t, a.Error)
	require.Equal(t, backend.StatusInternal, a.Status)
	require.Equal(t, backend.ErrorSourcePlugin, a.ErrorSource)
	require.Contains(t, a.Error.Error(), "query A: internal error")
	require.Contains(t, a.Error.Error(), "boom in num_requests_waiting")
	require.NoError(t, resp.Responses["B"].Error, "the other query still answers")
}

// TestRejectedPromQL: Prometheus rejecting an expression the plugin wrote
// is the plugin's bug (500, plugin); rejecting the user's raw PromQL is the
// user's error (400, downstream).
func TestRejectedPromQL(t *testing.T) {
	url := fakePrometheus(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/label/") {
			_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running"]}`))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected <by>"}`))
	})
	e := fakeExecutor(t, url, "5s")
	now := time.Now()
	resp := run(t, e,
		dq("A", `{"queryType":"queue"}`, now.Add(-time.Hour), now),
		dq("B", `{"queryType":"topk"}`, now.Add(-time.Hour), now),
		dq("C", `{"queryType":"promql","expr":"sum by (x) (up"}`, now.Add(-time.Hour), now),
	)
	for _, ref := range []string{"A", "B"} {
		r := resp.Responses[ref]
		require.Error(t, r.Error, ref)
		require.Equal(t, backend.StatusInternal, r.Status, "%s: %v", ref, r.Error)
		require.Equal(t, backend.ErrorSourcePlugin, r.ErrorSource, ref)
		require.Contains(t, r.Error.Error(), "parse error", ref)
	}
	c := resp.Responses["C"]
	require.Error(t, c.Error)
	require.Equal(t, backend.StatusBadRequest, c.Status, "%v", c.Error)
	require.Equal(t, backend.ErrorSourceDownstream, c.ErrorSource)
	require.Contains(t, c.Error.Error(), "Prometheus rejected the expression")
}

// rankingAnswer is an instant ranking result: instance → value.
func rankingAnswer(values map[string]float64) model.Vector {
	var v model.Vector
	for inst, x := range values {
		v = append(v, &model.Sample{Metric: model.Metric{"instance": model.LabelValue(inst)}, Value: model.SampleValue(x)})
	}
	return v
}

// rankTable returns the ranked instances of a topk table, in order.
func rankTable(t *testing.T, frames data.Frames) (*data.Frame, []string) {
	t.Helper()
	for _, f := range frames {
		if idx := fieldIndex(f, "instance"); idx >= 0 {
			var out []string
			for i := 0; i < f.Rows(); i++ {
				out = append(out, f.Fields[idx].At(i).(string))
			}
			return f, out
		}
	}
	t.Fatalf("no table among %d frames", len(frames))
	return nil, nil
}

func fieldIndex(f *data.Frame, name string) int {
	for i, fld := range f.Fields {
		if fld.Name == name {
			return i
		}
	}
	return -1
}

// TestTopKRanksNaNLast: a group whose ranking value is NaN (no samples to
// divide, an empty histogram) ranks after every number, whatever order
// Prometheus answered in.
func TestTopKRanksNaNLast(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]float64
		k      string
		want   []string
	}{
		{name: "NaN after numbers", k: "3", values: map[string]float64{"a": math.NaN(), "b": 1, "c": 5}, want: []string{"c", "b", "a"}},
		{name: "NaN drops out of k", k: "2", values: map[string]float64{"a": math.NaN(), "b": 0, "c": 2, "d": math.NaN()}, want: []string{"c", "b"}},
		{name: "ties by instance", k: "3", values: map[string]float64{"z": 1, "y": 1, "x": math.NaN()}, want: []string{"y", "z", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 5 { // the vector's order comes from a map: try several
				e := scriptedExecutor(&scripted{instant: func(string, time.Time) model.Vector { return rankingAnswer(tt.values) }})
				now := time.Now()
				r := run(t, e, dq("A", `{"queryType":"topk","format":"table","k":`+tt.k+`}`, now.Add(-time.Hour), now)).Responses["A"]
				require.NoError(t, r.Error)
				_, got := rankTable(t, r.Frames)
				require.Equal(t, tt.want, got)
			}
		})
	}
}

// failingAgents answers for one agent and fails another.
type failingAgents struct{}

func (failingAgents) Fetch(ctx context.Context, urls []string) agentapi.Result {
	res := agentapi.Result{Time: time.Now()}
	for _, u := range urls {
		if ctx.Err() != nil {
			res.Errors = append(res.Errors, &agentapi.AgentError{URL: u, Err: ctx.Err()})
			continue
		}
		if strings.Contains(u, "dead") {
			res.Errors = append(res.Errors, &agentapi.AgentError{URL: u, Err: errors.New("connection refused")})
			continue
		}
		res.Reports = append(res.Reports, agentapi.AgentReport{URL: u, Report: agentapi.Report{Node: "n1",
			GPUs: []agentapi.GPU{{Index: 0, UUID: "GPU-1", VLLMInstance: "a", MemoryUsedBytes: agentapi.Float(1 << 30), MemoryTotalBytes: agentapi.Float(80 << 30)}}}})
	}
	return res
}

// TestTopKTableNamesFailingAgents: the top-k table keeps the GPU columns of
// the agents that answered and names the agent that failed in a notice.
func TestTopKTableNamesFailingAgents(t *testing.T) {
	p := &scripted{instant: func(string, time.Time) model.Vector { return rankingAnswer(map[string]float64{"a": 3}) }}
	e := scriptedExecutor(p)
	e.Agents = failingAgents{}
	e.Settings.Agents = models.AgentSettings{URLs: []string{"http://live:9400", "http://dead:9400"}, Timeout: time.Second}
	now := time.Now()
	r := run(t, e, dq("A", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	table, got := rankTable(t, r.Frames)
	require.Equal(t, []string{"a"}, got)
	idx := fieldIndex(table, "gpus")
	require.GreaterOrEqual(t, idx, 0, "the live agent's GPU columns are there")
	require.NotNil(t, table.Fields[idx].At(0))
	require.NotNil(t, table.Meta)
	var texts []string
	for _, n := range table.Meta.Notices {
		texts = append(texts, n.Text)
	}
	require.Len(t, texts, 1, "one notice for the dead agent: %v", texts)
	require.Equal(t, data.NoticeSeverityWarning, table.Meta.Notices[0].Severity)
	require.Contains(t, texts[0], "http://dead:9400")
	require.Contains(t, texts[0], "connection refused")
}

// TestAlertRequestsRejectVariables: only a request from Grafana's alerting
// engine (the FromAlert header, raw or forwarded) rejects dashboard
// variables it cannot have replaced; a dashboard request passes them on.
func TestAlertRequestsRejectVariables(t *testing.T) {
	now := time.Now()
	q := dq("A", `{"queryType":"queue","models":["$model"]}`, now.Add(-time.Hour), now)
	tests := []struct {
		name    string
		headers map[string]string
		alert   bool
	}{
		{name: "dashboard", headers: nil},
		{name: "other header", headers: map[string]string{"X-Other": "true"}},
		{name: "alert", headers: map[string]string{backend.FromAlertHeaderName: "true"}, alert: true},
		{name: "alert forwarded", headers: map[string]string{"http_" + backend.FromAlertHeaderName: "true"}, alert: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := scriptedExecutor(&scripted{})
			r := e.QueryData(context.Background(), &backend.QueryDataRequest{Headers: tt.headers, Queries: []backend.DataQuery{q}}).Responses["A"]
			if !tt.alert {
				require.NoError(t, r.Error)
				return
			}
			require.ErrorContains(t, r.Error, "models holds $model")
			require.Equal(t, backend.ErrorSourceDownstream, r.ErrorSource)
		})
	}
}

// TestDuplicateQueriesShareTheAnswer: identical queries in one request are
// fetched once and every one of them gets the answer, not just the first.
func TestDuplicateQueriesShareTheAnswer(t *testing.T) {
	release := make(chan struct{})
	p := &scripted{matrix: func(string, v1.Range) model.Matrix {
		<-release // hold the first fetch until the duplicates wait on it
		return model.Matrix{{Metric: model.Metric{"instance": "a", "__signal__": "waiting"},
			Values: []model.SamplePair{{Timestamp: 0, Value: 7}}}}
	}}
	e := scriptedExecutor(p)
	now := time.Now()
	var qs []backend.DataQuery
	for _, ref := range []string{"A", "B", "C"} {
		qs = append(qs, dq(ref, `{"queryType":"promql","expr":"vllm:num_requests_waiting"}`, now.Add(-time.Hour), now))
	}
	done := make(chan *backend.QueryDataResponse)
	go func() { done <- run(t, e, qs...) }()
	for {
		p.mu.Lock()
		n := len(p.ranges)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	resp := <-done
	require.Len(t, p.ranges, 1, "one round trip")
	for _, ref := range []string{"A", "B", "C"} {
		require.NoError(t, resp.Responses[ref].Error, ref)
		require.Equal(t, []float64{7}, floats(resp.Responses[ref].Frames), ref)
	}
}

// TestDuplicateRankingsShareTheAnswer: the same for topk's instant ranking
// query.
func TestDuplicateRankingsShareTheAnswer(t *testing.T) {
	e := scriptedExecutor(&scripted{instant: func(string, time.Time) model.Vector {
		return rankingAnswer(map[string]float64{"a": 2, "b": 5})
	}})
	now := time.Now()
	resp := run(t, e,
		dq("A", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now),
		dq("B", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now),
	)
	for _, ref := range []string{"A", "B"} {
		require.NoError(t, resp.Responses[ref].Error, ref)
		_, got := rankTable(t, resp.Responses[ref].Frames)
		require.Equal(t, []string{"b", "a"}, got, ref)
	}
}

// TestTopKTableDiscoversAgents: without a static list the agents come from
// the targets of the configured Prometheus job, and their GPUs join the table.
func TestTopKTableDiscoversAgents(t *testing.T) {
	p := &scripted{instant: func(expr string, _ time.Time) model.Vector {
		if strings.Contains(expr, `up{job="vllm-node-agent"}`) {
			return model.Vector{{Metric: model.Metric{"instance": "live:9400"}, Value: 1}}
		}
		return rankingAnswer(map[string]float64{"a": 3})
	}}
	e := scriptedExecutor(p)
	e.Agents = failingAgents{}
	e.Settings.Agents = models.AgentSettings{Job: "vllm-node-agent", Timeout: time.Second}
	now := time.Now()
	r := run(t, e, dq("A", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	table, _ := rankTable(t, r.Frames)
	idx := fieldIndex(table, "gpus")
	require.GreaterOrEqual(t, idx, 0, "the discovered agent's GPU columns are there")
	require.Equal(t, int64(1), *(table.Fields[idx].At(0).(*int64)))
	require.Empty(t, table.Meta.Notices)
}

// TestWaitBelowSmallestBucket: a quantile under the smallest bucket boundary
// is flagged as interpolated; one exactly at the boundary is measured.
func TestWaitBelowSmallestBucket(t *testing.T) {
	tests := []struct {
		value  float64
		notice bool
	}{
		{value: 0.29, notice: true},
		{value: 0.3},
		{value: 0},
		{value: math.NaN()},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.value), func(t *testing.T) {
			p := &scripted{matrix: func(string, v1.Range) model.Matrix {
				return model.Matrix{{Metric: model.Metric{vllm.SignalTagLabel: "p50"}, Values: []model.SamplePair{{Timestamp: 0, Value: model.SampleValue(tt.value)}}}}
			}}
			now := time.Now()
			r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"waitTime","live":true}`, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			var texts []string // the smallest-bucket notices; this scripted fleet also has no engines to name
			for _, n := range r.Frames[0].Meta.Notices {
				if strings.Contains(n.Text, "smallest histogram bucket") {
					texts = append(texts, n.Text)
				}
			}
			if tt.notice {
				require.Len(t, texts, 1)
				require.Contains(t, texts[0], "Some p50 values are below 0.3s")
			} else {
				require.Empty(t, texts)
			}
		})
	}
}

// TestTopKTableJoinsModels: an instance serving two models lists both, and
// its engine count adds up the engines of each.
func TestTopKTableJoinsModels(t *testing.T) {
	sample := func(v float64) []model.SamplePair {
		return []model.SamplePair{{Timestamp: 0, Value: model.SampleValue(v)}}
	}
	p := &scripted{
		instant: func(string, time.Time) model.Vector { return rankingAnswer(map[string]float64{"a": 3}) },
		matrix: func(string, v1.Range) model.Matrix {
			return model.Matrix{
				{Metric: model.Metric{vllm.SignalTagLabel: "value", "instance": "a"}, Values: sample(3)},
				{Metric: model.Metric{vllm.SignalTagLabel: "engines", "instance": "a", "model_name": "m1"}, Values: sample(1)},
				{Metric: model.Metric{vllm.SignalTagLabel: "engines", "instance": "a", "model_name": "m2"}, Values: sample(2)},
			}
		},
	}
	now := time.Now()
	r := run(t, scriptedExecutor(p), dq("A", `{"queryType":"topk","format":"table"}`, now.Add(-time.Hour), now)).Responses["A"]
	require.NoError(t, r.Error)
	table, got := rankTable(t, r.Frames)
	require.Equal(t, []string{"a"}, got)
	require.Equal(t, "m1, m2", table.Fields[fieldIndex(table, "model")].At(0))
	require.Equal(t, int64(3), table.Fields[fieldIndex(table, "engines")].At(0))
}
