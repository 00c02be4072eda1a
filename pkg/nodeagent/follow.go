package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The vLLM gauges a followed engine's load is read from. V0 engines call
// the KV-cache gauge gpu_cache_usage_perc and have no engine label.
const (
	metricRunning   = "vllm:num_requests_running"
	metricKVUsage   = "vllm:kv_cache_usage_perc"
	metricKVUsageV0 = "vllm:gpu_cache_usage_perc"
	maxFollowBody   = 16 << 20
)

// follower reads the load of vllm-sim engines from their /metrics.
type follower struct {
	urls      []string
	instances []string // host:port of each URL, Prometheus' instance label
	client    *http.Client

	mu   sync.Mutex
	last [][]engineLoad // last engines seen per URL, so GPU order stays put
}

// engineLoad is one engine's reading.
type engineLoad struct {
	engine      string
	running, kv float64
	model       string
}

func newFollower(urls []string, client *http.Client) (*follower, error) {
	f := &follower{urls: urls, client: client, last: make([][]engineLoad, len(urls))}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("follow URL %q: %w", raw, errors.New("not an http(s) URL with a host"))
		}
		f.instances = append(f.instances, u.Host)
	}
	return f, nil
}

// loads fetches every URL at once and lays their engines out over n GPUs.
// A URL that fails keeps its last engines (idle, with the error) so the
// GPUs after it do not shift; GPUs beyond the engines found are idle.
func (f *follower) loads(ctx context.Context, n int) []load {
	engines, errs := f.fetchAll(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]load, 0, n)
	for i := range f.urls {
		if errs[i] == nil {
			f.last[i] = engines[i]
		}
		for _, e := range f.last[i] {
			l := load{running: e.running, kv: e.kv, instance: f.instances[i], model: e.model}
			if errs[i] != nil {
				l = load{instance: f.instances[i], model: e.model, err: fmt.Sprintf("follow %s: %v", f.urls[i], errs[i])}
			}
			out = append(out, l)
		}
	}
	for len(out) < n {
		out = append(out, load{})
	}
	return out[:n]
}

func (f *follower) fetchAll(ctx context.Context) ([][]engineLoad, []error) {
	engines := make([][]engineLoad, len(f.urls))
	errs := make([]error, len(f.urls))
	var wg sync.WaitGroup
	for i, u := range f.urls {
		wg.Go(func() { engines[i], errs[i] = f.fetch(ctx, u) })
	}
	wg.Wait()
	return engines, errs
}

func (f *follower) fetch(ctx context.Context, u string) ([]engineLoad, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return parseEngineLoads(io.LimitReader(resp.Body, maxFollowBody))
}

// parseEngineLoads reads running requests and KV-cache usage per engine
// from a vLLM exposition, engines ordered by their engine label.
func parseEngineLoads(r io.Reader) ([]engineLoad, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	byEngine := map[string]*engineLoad{}
	get := func(m *dto.Metric) *engineLoad {
		eng, mdl := labelValue(m, "engine"), labelValue(m, "model_name")
		if byEngine[eng] == nil {
			byEngine[eng] = &engineLoad{engine: eng, model: mdl}
		}
		return byEngine[eng]
	}
	for _, m := range gaugeMetrics(fams, metricRunning) {
		get(m).running = m.GetGauge().GetValue()
	}
	kv := gaugeMetrics(fams, metricKVUsage)
	if len(kv) == 0 {
		kv = gaugeMetrics(fams, metricKVUsageV0)
	}
	for _, m := range kv {
		get(m).kv = m.GetGauge().GetValue()
	}
	if len(byEngine) == 0 {
		return nil, fmt.Errorf("no %s series: %w", metricRunning, errors.New("not a vLLM exposition"))
	}
	return sortedEngines(byEngine), nil
}

func gaugeMetrics(fams map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if fam, ok := fams[name]; ok {
		return fam.GetMetric()
	}
	return nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sortedEngines orders engines by their engine label, numerically when
// they are numbers (V0's missing label sorts first).
func sortedEngines(m map[string]*engineLoad) []engineLoad {
	out := make([]engineLoad, 0, len(m))
	for _, e := range m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, aerr := strconv.Atoi(out[i].engine)
		b, berr := strconv.Atoi(out[j].engine)
		if aerr == nil && berr == nil {
			return a < b
		}
		return out[i].engine < out[j].engine
	})
	return out
}
