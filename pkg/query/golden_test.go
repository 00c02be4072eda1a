package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/experimental"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/fleettest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/sim"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

var (
	update = flag.Bool("update", false, "rewrite golden frame files from the recordings")
	record = flag.Bool("record", false, "record fresh Prometheus responses from a simulated fleet (then run with -update)")
)

// goldenQueries are the queries whose exact frames are pinned, per fleet.
var goldenQueries = map[string]string{
	"queue_instance":      `{"queryType":"queue","grouping":"instance"}`,
	"queue_model_legend":  `{"queryType":"queue","grouping":"model","legend":"{{model_name}} {{signal}}"}`,
	"wait_queue_time":     `{"queryType":"waitTime","grouping":"instance"}`,
	"wait_itl_live":       `{"queryType":"waitTime","family":"itl","live":true,"quantiles":[0.5,0.99],"grouping":"none"}`,
	"preemptions_anno":    `{"queryType":"preemptions"}`,
	"preemptions_series":  `{"queryType":"preemptions","asSeries":true,"grouping":"instance"}`,
	"topk_waiting":        `{"queryType":"topk","k":2,"rankBy":"waiting"}`,
	"topk_engine_kv_last": `{"queryType":"topk","k":3,"rankBy":"kv_usage","aggregation":"last","grouping":"instance_engine"}`,
}

// recording is what one fleet's Prometheus answered, replayed by tests.
type recording struct {
	From, To  time.Time
	Names     []string
	Responses map[string]json.RawMessage // key: kind + "\x00" + expr
	// Requests holds, per answer, the range it was asked for: start, end
	// and step of a range query; the evaluation time (as Start and End) of
	// an instant query.
	Requests map[string]sent
}

// sent is the time range of one request to Prometheus.
type sent struct {
	Start, End time.Time
	Step       time.Duration
}

// replay is a Prometheus that answers from a recording, and only when asked
// for the recorded expression over the recorded range.
type replay struct{ rec recording }

func (r replay) get(kind, expr string, asked sent, into any) error {
	key := kind + "\x00" + expr
	raw, ok := r.rec.Responses[key]
	if !ok {
		return fmt.Errorf("no recorded %s response for %s", kind, expr)
	}
	if err := r.check(key, asked); err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// check fails unless the recorded answer under key was asked for over the
// same start, end and step.
func (r replay) check(key string, asked sent) error {
	want, ok := r.rec.Requests[key]
	if !ok {
		return fmt.Errorf("the recording has no request range for %q", key)
	}
	if !asked.Start.Equal(want.Start) || !asked.End.Equal(want.End) || asked.Step != want.Step {
		return fmt.Errorf("%q: asked for start %s end %s step %s; the recorded answer is for start %s end %s step %s",
			key, asked.Start.UTC().Format(time.RFC3339Nano), asked.End.UTC().Format(time.RFC3339Nano), asked.Step,
			want.Start.UTC().Format(time.RFC3339Nano), want.End.UTC().Format(time.RFC3339Nano), want.Step)
	}
	return nil
}

func (r replay) Query(_ context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	var v model.Vector
	if r.predates("instant", expr) {
		return v, nil, nil
	}
	return v, nil, r.get("instant", expr, sent{Start: ts, End: ts}, &v)
}

// predates reports an expression added after the recordings were made
// whose answer for their fleets is empty: the stall and sleep expressions
// (every recorded engine is awake and moving), and the prefix-cache hit
// rates of the fleet and saturation queries (their recordings predate
// them; the prefixCache recordings hold them, so they are pinned there).
// The fleet's scrape-health expressions are answered empty too, as a store
// without Prometheus' scrape series answers them (the scrape columns
// null, no engine flapping); TestFleetStates and the scrape-health
// integration test pin them. The fleet's version-evidence expression is
// answered empty as well: it is asked only when an engine lacks a checked
// family, which no recorded engine does (TestFleetPredates pins it).
func (r replay) predates(kind, expr string) bool {
	_, ok := r.rec.Responses[kind+"\x00"+expr]
	return !ok && (strings.Contains(expr, "engine_sleep_state") || strings.Contains(expr, "prefix_cache_") ||
		isRoleExpr(expr) || isScrapeExpr(expr) || isEvidenceExpr(expr))
}

// isEvidenceExpr: the fleet's version-evidence expression, which the
// recordings before it lack.
func isEvidenceExpr(expr string) bool {
	return strings.HasPrefix(expr, "group by (") && strings.Contains(expr, "request_params_max_tokens_count")
}

// isScrapeExpr: the fleet's scrape-health expressions (changes of up, the
// scrape's duration and timeout), which the recordings lack.
func isScrapeExpr(expr string) bool {
	return strings.Contains(expr, "(changes(up") || strings.Contains(expr, "(scrape_duration_seconds") ||
		strings.Contains(expr, "(scrape_timeout_seconds")
}

// isRoleExpr: the fleet's role column expression, which the recordings
// before it lack; their fleets carry no role label, so the empty answer is
// what Prometheus would give the column (role "" on every row).
func isRoleExpr(expr string) bool {
	return strings.HasPrefix(expr, "group by (") && strings.Contains(expr, "llm_isvc_role")
}

// QueryRange decodes the recorded answer with the client's own streaming
// decoder, so the goldens pin it too.
func (r replay) QueryRange(_ context.Context, expr string, rg v1.Range) (prom.Matrix, []string, error) {
	asked := sent{Start: rg.Start, End: rg.End, Step: rg.Step}
	if r.predates("range", expr) {
		return nil, nil, nil
	}
	if _, ok := r.rec.Responses["range\x00"+expr]; !ok {
		return r.part(expr, asked)
	}
	var raw json.RawMessage
	if err := r.get("range", expr, asked, &raw); err != nil {
		return nil, nil, err
	}
	m, err := prom.DecodeMatrix(bytes.NewReader(raw))
	return m, nil, err
}

// part answers a plain signal expression from a recorded or-union that
// held it tagged (label_replace(expr, "vllm_signal", "<name>", "", "")):
// the union's series of that signal without the tag, which is what
// Prometheus answers for the plain expression. The queue query once ran
// its signals as one union; the recordings predate that change.
func (r replay) part(expr string, asked sent) (prom.Matrix, []string, error) {
	prefix := fmt.Sprintf("label_replace(%s, %q, \"", expr, vllm.SignalTagLabel)
	for key, raw := range r.rec.Responses {
		_, union, ok := strings.Cut(key, "\x00")
		i := strings.Index(union, prefix)
		if !ok || !strings.HasPrefix(key, "range\x00") || i < 0 {
			continue
		}
		if err := r.check(key, asked); err != nil {
			return nil, nil, err
		}
		name, _, _ := strings.Cut(union[i+len(prefix):], "\"")
		m, err := prom.DecodeMatrix(bytes.NewReader(raw))
		if err != nil {
			return nil, nil, err
		}
		var out prom.Matrix
		for _, s := range m {
			if s.Labels[vllm.SignalTagLabel] == name {
				delete(s.Labels, vllm.SignalTagLabel)
				out = append(out, s)
			}
		}
		return out, nil, nil
	}
	return nil, nil, fmt.Errorf("no recorded range response for %s", expr)
}

func (r replay) MetricNames(context.Context, string, time.Time, time.Time) ([]string, error) {
	return r.rec.Names, nil
}

// recorder passes calls to a real Prometheus and keeps the answers.
type recorder struct {
	query.Prometheus
	mu  sync.Mutex
	rec *recording
}

func (r *recorder) keep(kind, expr string, asked sent, v any) {
	b, _ := json.Marshal(v)
	r.mu.Lock()
	r.rec.Responses[kind+"\x00"+expr] = b
	r.rec.Requests[kind+"\x00"+expr] = asked
	r.mu.Unlock()
}

func (r *recorder) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	v, w, err := r.Prometheus.Query(ctx, expr, ts)
	r.keep("instant", expr, sent{Start: ts, End: ts}, v)
	return v, w, err
}

func (r *recorder) QueryRange(ctx context.Context, expr string, rg v1.Range) (prom.Matrix, []string, error) {
	m, w, err := r.Prometheus.QueryRange(ctx, expr, rg)
	r.keep("range", expr, sent{Start: rg.Start, End: rg.End, Step: rg.Step}, toModel(m))
	return m, w, err
}

// toModel writes a matrix back in Prometheus' JSON shape for recordings.
func toModel(m prom.Matrix) model.Matrix {
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		ss := &model.SampleStream{Metric: model.Metric{}}
		for k, v := range s.Labels {
			ss.Metric[model.LabelName(k)] = model.LabelValue(v)
		}
		for i, t := range s.Times {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(s.Values[i])})
		}
		out = append(out, ss)
	}
	return out
}

func (r *recorder) MetricNames(ctx context.Context, re string, s, e time.Time) ([]string, error) {
	n, err := r.Prometheus.MetricNames(ctx, re, s, e)
	r.rec.Names = n
	return n, err
}

func v0Fleet(seed uint64) sim.Config {
	cfg := fleettest.HotFleet(seed)
	for i := range cfg.Instances {
		cfg.Instances[i].Generation, cfg.Instances[i].Engines = sim.V0, 1
	}
	return cfg
}

var goldenFleets = map[string]func(uint64) sim.Config{"v1": fleettest.HotFleet, "v0": v0Fleet, "mixed": fleettest.MixedFleet}

func goldenSettings() models.Settings {
	return models.Settings{ScrapeInterval: time.Second, InstanceLabel: "instance", MetricPrefix: "vllm:"}
}

// rankGoldenQueries pin top-k for every rankBy and every aggregation. They
// have recordings of their own (rank_<fleet>.json), so recording them left
// the recordings of goldenQueries as they were.
var rankGoldenQueries = map[string]string{
	"topk_waiting_avg":         `{"queryType":"topk","k":2,"rankBy":"waiting","aggregation":"avg"}`,
	"topk_waiting_last":        `{"queryType":"topk","k":2,"rankBy":"waiting","aggregation":"last"}`,
	"topk_running_avg":         `{"queryType":"topk","k":2,"rankBy":"running","aggregation":"avg"}`,
	"topk_kv_usage_max":        `{"queryType":"topk","k":2,"rankBy":"kv_usage"}`,
	"topk_wait_p99_avg":        `{"queryType":"topk","k":2,"rankBy":"wait_p99","aggregation":"avg"}`,
	"topk_preemption_rate_max": `{"queryType":"topk","k":2,"rankBy":"preemption_rate"}`,
	"topk_engine_running_last": `{"queryType":"topk","k":3,"rankBy":"running","aggregation":"last","grouping":"instance_engine"}`,
}

func goldenRequest(rec recording, queries map[string]string) *backend.QueryDataRequest {
	req := &backend.QueryDataRequest{}
	for name, js := range queries {
		q := dq(name, js, rec.From, rec.To)
		req.Queries = append(req.Queries, q)
	}
	return req
}

// TestGoldenFrames replays recorded Prometheus answers for V1, V0 and mixed
// fleets through the executor and compares every frame with its golden file.
func TestGoldenFrames(t *testing.T) {
	checkGoldens(t, "", goldenQueries)
}

// TestRankGoldenFrames does the same for every rankBy and aggregation.
func TestRankGoldenFrames(t *testing.T) {
	checkGoldens(t, "rank_", rankGoldenQueries)
}

// setFleets gives a recording set fleets of its own, configured for what
// its queries read (speculative decoding, LoRA); sets not listed record
// goldenFleets. A test file adds its set from an init function.
var setFleets = map[string]map[string]func(uint64) sim.Config{}

func checkGoldens(t *testing.T, set string, queries map[string]string) {
	fleets := goldenFleets
	if f, ok := setFleets[set]; ok {
		fleets = f
	}
	for fleet := range fleets {
		t.Run(fleet, func(t *testing.T) {
			path := filepath.Join("testdata", "recorded", set+fleet+".json")
			if *record {
				recordFleet(t, fleets[fleet], path, queries)
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "recordings are committed; make new ones with -record")
			var rec recording
			require.NoError(t, json.Unmarshal(raw, &rec))
			p := replay{rec: rec}
			e := &query.Executor{Prom: p, Settings: goldenSettings(), Detector: query.NewDetector(p, "vllm:", func() time.Time { return rec.To })}
			resp := e.QueryData(context.Background(), goldenRequest(rec, queries))
			for name := range queries {
				dr := resp.Responses[name]
				require.NoError(t, dr.Error, name)
				experimental.CheckGoldenJSONResponse(t, filepath.Join("testdata", "golden"), fleet+"_"+name, &dr, *update)
			}
		})
	}
}

func recordFleet(t *testing.T, fleet func(uint64) sim.Config, path string, queries map[string]string) {
	// StartRoles is Start plus a role target label (llm_isvc_role, as KServe
	// sets it) on the instances that have a role: fleets without roles are
	// scraped exactly as Start scrapes them.
	env := fleettest.StartRoles(t, fleet(5))
	env.Prom.WaitForSeries(t, `count_over_time(vllm:num_requests_running[1m]) >= 25`, 1, 90*time.Second)
	to := time.Now().Truncate(time.Second)
	rec := &recording{From: to.Add(-20 * time.Second), To: to, Responses: map[string]json.RawMessage{}, Requests: map[string]sent{}}
	real := executor(t, env.Prom.URL)
	r := &recorder{Prometheus: real.Prom, rec: rec}
	e := &query.Executor{Prom: r, Settings: goldenSettings(), Detector: query.NewDetector(r, "vllm:", time.Now)}
	resp := e.QueryData(context.Background(), goldenRequest(*rec, queries))
	for name, dr := range resp.Responses {
		require.NoError(t, dr.Error, name)
	}
	b, err := json.MarshalIndent(rec, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, b, 0o644))
}
