package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/plugin"
)

// identityProm is a fake Prometheus that answers each caller as the
// identity its Authorization header names ("Bearer tok-alice" is alice,
// no header is anonymous), as a server behind an auth proxy would, and
// records the identity headers of every request.
type identityProm struct {
	*httptest.Server
	delay time.Duration

	mu   sync.Mutex
	seen []http.Header // Authorization, X-Id-Token and Cookie of each request
	// ranges counts range queries by the identity they were answered for.
	ranges map[string]int
}

func newIdentityProm(t *testing.T, delay time.Duration) *identityProm {
	t.Helper()
	p := &identityProm{delay: delay, ranges: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *identityProm) serve(w http.ResponseWriter, r *http.Request) {
	who := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer tok-")
	if who == "" {
		who = "anonymous"
	}
	p.mu.Lock()
	h := http.Header{}
	for _, k := range []string{"Authorization", "X-Id-Token", "Cookie"} {
		if v := r.Header.Values(k); len(v) > 0 {
			h[k] = v
		}
	}
	p.seen = append(p.seen, h)
	if strings.HasSuffix(r.URL.Path, "/query_range") {
		p.ranges[who]++
	}
	p.mu.Unlock()
	time.Sleep(p.delay)
	w.Header().Set("Content-Type", "application/json")
	now := time.Now().Unix()
	switch {
	case strings.HasSuffix(r.URL.Path, "/query_range"):
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","who":%q},"values":[[%d,"1"]]}]}}`, who, now)
	case strings.HasSuffix(r.URL.Path, "/query"):
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	default:
		_, _ = w.Write([]byte(`{"status":"success","data":[]}`))
	}
}

// requests returns the identity headers of every request so far, and forgets them.
func (p *identityProm) requests() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

func (p *identityProm) rangeCount(who string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ranges[who]
}

func forwardingDS(t *testing.T, url, extra string) *plugin.Datasource {
	t.Helper()
	inst, err := plugin.NewDatasource(context.Background(), backend.DataSourceInstanceSettings{UID: "fwd", URL: url,
		JSONData: json.RawMessage(`{"scrapeInterval":"15s"` + extra + `}`)})
	require.NoError(t, err)
	ds := inst.(*plugin.Datasource)
	t.Cleanup(ds.Dispose)
	return ds
}

// userHeaders is what Grafana puts on a plugin request for a signed-in user.
func userHeaders(who string) map[string]string {
	return map[string]string{"Authorization": "Bearer tok-" + who, "X-Id-Token": "id-" + who,
		"Cookie": "grafana_session=sess-" + who + "; team=" + who + "; other=x"}
}

func upQuery(from, to time.Time) backend.DataQuery {
	return backend.DataQuery{RefID: "A", JSON: json.RawMessage(`{"queryType":"promql","expr":"up"}`), Interval: 15 * time.Second,
		MaxDataPoints: 100, TimeRange: backend.TimeRange{From: from, To: to}}
}

// whoAnswered is the "who" label of the query's first series.
func whoAnswered(t *testing.T, resp *backend.QueryDataResponse) string {
	t.Helper()
	r := resp.Responses["A"]
	require.NoError(t, r.Error)
	for _, f := range r.Frames {
		for _, fld := range f.Fields {
			if fld.Type() != data.FieldTypeTime && fld.Labels["who"] != "" {
				return fld.Labels["who"]
			}
		}
	}
	t.Fatalf("no series with a who label in %d frames", len(r.Frames))
	return ""
}

// TestForwardedHeadersPerSetting: the user's token, ID token and allowed
// cookies reach Prometheus on queries, health and resource calls exactly
// when the settings forward them.
func TestForwardedHeadersPerSetting(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		want  http.Header
	}{
		{name: "off", want: http.Header{}},
		{name: "oauth", extra: `,"oauthPassThru":true`,
			want: http.Header{"Authorization": {"Bearer tok-alice"}, "X-Id-Token": {"id-alice"}}},
		{name: "cookies", extra: `,"keepCookies":["team","absent"]`, want: http.Header{"Cookie": {"team=alice"}}},
		{name: "both", extra: `,"oauthPassThru":true,"keepCookies":["team"]`,
			want: http.Header{"Authorization": {"Bearer tok-alice"}, "X-Id-Token": {"id-alice"}, "Cookie": {"team=alice"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIdentityProm(t, 0)
			ds := forwardingDS(t, p.URL, tt.extra)
			h := userHeaders("alice")
			now := time.Now()
			_, err := ds.QueryData(context.Background(), &backend.QueryDataRequest{Headers: h, Queries: []backend.DataQuery{upQuery(now.Add(-time.Hour), now)}})
			require.NoError(t, err)
			_, err = ds.CheckHealth(context.Background(), &backend.CheckHealthRequest{Headers: h})
			require.NoError(t, err)
			rh := map[string][]string{}
			for k, v := range h {
				rh[k] = []string{v}
			}
			err = ds.CallResource(context.Background(), &backend.CallResourceRequest{Method: "GET", Path: "models", URL: "models", Headers: rh},
				backend.CallResourceResponseSenderFunc(func(*backend.CallResourceResponse) error { return nil }))
			require.NoError(t, err)
			reqs := p.requests()
			require.NotEmpty(t, reqs)
			for i, got := range reqs {
				require.Equal(t, tt.want, got, "request %d of %d", i, len(reqs))
			}
		})
	}
}

// TestIdentitiesNeverShareAnswers: with forwarding on, one user's cached
// or in-flight answer is never served to another, while each user's own
// repeat is still served from the cache; with forwarding off the same
// requests share one answer.
func TestIdentitiesNeverShareAnswers(t *testing.T) {
	tests := []struct {
		name       string
		extra      string
		wantAlice  string
		wantBob    string
		wantRanges map[string]int
	}{
		{name: "oauth", extra: `,"oauthPassThru":true`, wantAlice: "alice", wantBob: "bob",
			wantRanges: map[string]int{"alice": 1, "bob": 1}},
		{name: "cookies", extra: `,"keepCookies":["team"]`, wantAlice: "anonymous", wantBob: "anonymous",
			wantRanges: map[string]int{"anonymous": 2}},
		{name: "off", wantAlice: "anonymous", wantBob: "anonymous", wantRanges: map[string]int{"anonymous": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIdentityProm(t, 100*time.Millisecond)
			ds := forwardingDS(t, p.URL, tt.extra)
			end := time.Now().Truncate(time.Minute)
			run := func(who string) *backend.QueryDataResponse {
				resp, err := ds.QueryData(context.Background(), &backend.QueryDataRequest{Headers: userHeaders(who),
					Queries: []backend.DataQuery{upQuery(end.Add(-time.Hour), end)}})
				require.NoError(t, err)
				return resp
			}
			// At once: an in-flight fetch must not be shared across users either.
			var wg sync.WaitGroup
			answers := make([]*backend.QueryDataResponse, 2)
			for i, who := range []string{"alice", "bob"} {
				wg.Add(1)
				go func() { defer wg.Done(); answers[i] = run(who) }()
			}
			wg.Wait()
			require.Equal(t, tt.wantAlice, whoAnswered(t, answers[0]))
			require.Equal(t, tt.wantBob, whoAnswered(t, answers[1]))
			// Again, one after the other: served from each user's cache.
			require.Equal(t, tt.wantBob, whoAnswered(t, run("bob")))
			require.Equal(t, tt.wantAlice, whoAnswered(t, run("alice")))
			for who, n := range tt.wantRanges {
				require.Equal(t, n, p.rangeCount(who), "range queries answered for %s", who)
			}
		})
	}
}

// TestForwardedTokenRedacted: a Prometheus (or proxy) that quotes the
// request's headers in its error never hands the user's token back.
func TestForwardedTokenRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprintf(w, "upstream said no to %s / %s / %s", r.Header.Get("Authorization"), r.Header.Get("X-Id-Token"), r.Header.Get("Cookie"))
	}))
	t.Cleanup(srv.Close)
	ds := forwardingDS(t, srv.URL, `,"oauthPassThru":true,"keepCookies":["team"]`)
	h := map[string]string{"Authorization": "Bearer tok-secret-alice", "X-Id-Token": "idtok-secret-alice", "Cookie": "team=cookie-secret-alice"}
	now := time.Now()
	resp, err := ds.QueryData(context.Background(), &backend.QueryDataRequest{Headers: h, Queries: []backend.DataQuery{upQuery(now.Add(-time.Hour), now)}})
	require.NoError(t, err)
	res, err := ds.CheckHealth(context.Background(), &backend.CheckHealthRequest{Headers: h})
	require.NoError(t, err)
	r := resp.Responses["A"]
	require.Error(t, r.Error)
	b, err := json.Marshal(r.Frames)
	require.NoError(t, err)
	for _, text := range []string{r.Error.Error(), string(b), res.Message, string(res.JSONDetails)} {
		require.NotContains(t, text, "secret-alice")
	}
}
