package sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// progressCounters are the counters a wedged engine must never move.
var progressCounters = []string{"vllm:generation_tokens_total", "vllm:prompt_tokens_total", "vllm:num_preemptions_total"}

// requireWedged checks the wedge from outside: between the two scrapes no
// progress counter moved, running stayed as it was and the queue grew.
func requireWedged(t *testing.T, before, after scraped) {
	t.Helper()
	for _, c := range progressCounters {
		require.Equal(t, before.value(t, c, nil), after.value(t, c, nil), "%s moved on a wedged engine", c)
	}
	require.Equal(t, sumOf(before, "vllm:request_success_total"), sumOf(after, "vllm:request_success_total"))
	require.Equal(t, before.value(t, "vllm:num_requests_running", nil), after.value(t, "vllm:num_requests_running", nil))
	require.Greater(t, after.value(t, "vllm:num_requests_waiting", nil), before.value(t, "vllm:num_requests_waiting", nil),
		"arrivals keep queueing")
}

func sumOf(s scraped, family string) float64 {
	var out float64
	for _, sv := range s.families[family].series {
		out += sv.value
	}
	return out
}

func TestWedgeAfterFromConfig(t *testing.T) {
	wedged := DefaultEngineParams()
	wedged.WedgeAfter = 90 * time.Second
	f := newTestFleet(t, func(c *Config) { c.Rate = 20 }, InstanceConfig{Model: "m", Engine: &wedged}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	require.False(t, f.Snapshot().Engines[0].Wedged, "not before wedge_after")
	require.NoError(t, f.Advance(45*time.Second))
	st := f.Snapshot().Engines[0]
	require.True(t, st.Wedged)
	require.Equal(t, 90*time.Second, st.WedgedAt, "the truth records the configured instant")
	before, other := scrape(t, f, 0), scrape(t, f, 1)

	require.NoError(t, f.Advance(2*time.Minute))
	requireWedged(t, before, scrape(t, f, 0))
	require.Greater(t, scrape(t, f, 1).value(t, "vllm:generation_tokens_total", nil), other.value(t, "vllm:generation_tokens_total", nil),
		"the other instance keeps going")
	require.Zero(t, f.Snapshot().Engines[0].SleepLevel, "a wedged engine is not asleep")
}

func TestWedgeAtRunTime(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Rate = 20 }, InstanceConfig{Model: "m", Engines: 2})
	require.NoError(t, f.Advance(time.Minute))
	require.NoError(t, f.Wedge(0))
	before := scrape(t, f, 0)
	for _, e := range f.Snapshot().Engines {
		require.True(t, e.Wedged)
		require.Equal(t, time.Minute, e.WedgedAt, "the true instant is when Wedge was called")
	}
	require.NoError(t, f.Advance(time.Minute))
	require.NoError(t, f.Wedge(0))
	require.Equal(t, time.Minute, f.Snapshot().Engines[0].WedgedAt, "wedging again keeps the first instant")
	after := scrape(t, f, 0)
	for _, c := range progressCounters {
		require.Equal(t, sumOf(before, c), sumOf(after, c), "%s moved on a wedged engine", c)
	}
	require.Greater(t, sumOf(after, "vllm:num_requests_waiting"), sumOf(before, "vllm:num_requests_waiting"))
	require.ErrorIs(t, f.Wedge(1), ErrNoInstance)
}

func TestWedgeEndpoint(t *testing.T) {
	f := newTestFleet(t, func(c *Config) { c.Rate = 20 }, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(time.Minute))
	h := f.Handler(0)
	do := func(method, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code
	}
	require.Equal(t, http.StatusMethodNotAllowed, do(http.MethodGet, "/debug/wedge"))
	require.False(t, f.Snapshot().Engines[0].Wedged)
	require.Equal(t, http.StatusOK, do(http.MethodPost, "/debug/wedge"))
	require.True(t, f.Snapshot().Engines[0].Wedged)
	require.Equal(t, http.StatusOK, do(http.MethodGet, "/health"), "a wedged engine still answers /health")
	require.Equal(t, http.StatusOK, do(http.MethodGet, "/metrics"))
	require.Equal(t, http.StatusNotFound, f.handlerCode(t, 3, "/debug/wedge"))
}

// handlerCode posts to path on the handler of instance.
func (f *Fleet) handlerCode(t *testing.T, instance int, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	f.Handler(instance).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
	return rec.Code
}

func TestWedgeAfterConfigKey(t *testing.T) {
	c, err := ParseConfig([]byte(`{"instances": [{"model": "m", "engine": {"wedge_after": "90s"}}, {"model": "m"}]}`), DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, c.Instances[0].Engine.WedgeAfter)
	cfg := DefaultConfig()
	cfg.Instances = []InstanceConfig{{Model: "m"}}
	cfg.Engine.WedgeAfter = -time.Second
	_, err = NewFleet(cfg)
	require.ErrorIs(t, err, ErrInvalidConfig)
}
