package prom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// DefaultMaxBodyBytes caps one response so a misbehaving server cannot make
// the plugin allocate without bound.
const DefaultMaxBodyBytes = 256 << 20

// DefaultMaxConcurrent is how many requests one data-source instance sends
// to Prometheus at once unless configured: below Prometheus' own
// --query.max-concurrency (20), so a crowd of viewers queues here, where
// each waiter's context is honoured, rather than inside Prometheus.
const DefaultMaxConcurrent = 10

// Options configures a Client.
type Options struct {
	URL  string
	HTTP httpclient.Options
	// Timeout, when set, bounds each whole request (the data source's
	// query timeout), in place of HTTP's own.
	Timeout      time.Duration
	MaxBodyBytes int64
	// MaxConcurrent bounds the requests in flight to Prometheus from this
	// client; 0 means DefaultMaxConcurrent.
	MaxConcurrent int
}

// Client talks to one Prometheus-compatible server.
type Client struct {
	api  v1.API
	raw  *rawClient
	base *url.URL
	// transport is the innermost transport, under the SDK's middlewares
	// (which hide CloseIdleConnections), so Close can reach it.
	transport *http.Transport
}

// New builds a client. The HTTP options carry Grafana's auth, headers and TLS.
func New(opts Options) (*Client, error) {
	base, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("parse prometheus url: %w", err)
	}
	c := &Client{base: base}
	hopts := opts.HTTP
	configure := hopts.ConfigureTransport
	hopts.ConfigureTransport = func(o httpclient.Options, t *http.Transport) {
		if configure != nil {
			configure(o, t)
		}
		c.transport = t
	}
	hopts.ConfigureMiddleware = withForwarding(hopts.ConfigureMiddleware)
	if opts.Timeout > 0 {
		t := httpclient.DefaultTimeoutOptions
		if hopts.Timeouts != nil {
			t = *hopts.Timeouts
		}
		t.Timeout = opts.Timeout
		hopts.Timeouts = &t
	}
	hc, err := httpclient.New(hopts)
	if err != nil {
		return nil, fmt.Errorf("build http client: %w", err)
	}
	max := opts.MaxBodyBytes
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	n := opts.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	c.raw = &rawClient{base: base, hc: hc, maxBody: max, slots: make(chan struct{}, n)}
	c.api = v1.NewAPI(c.raw)
	return c, nil
}

// Close closes the client's idle connections. Call it when the data-source
// instance is disposed, after its requests have ended.
func (c *Client) Close() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// Host returns the server's host:port for messages (never user info).
func (c *Client) Host() string { return c.base.Host }

// BuildInfo identifies the server. Compatible servers that lack the endpoint
// answer 404; callers then call it "a Prometheus-compatible server".
func (c *Client) BuildInfo(ctx context.Context) (v1.BuildinfoResult, error) {
	res, err := c.api.Buildinfo(ctx)
	return res, classify("buildinfo", err)
}

// MetricNames lists the metric names of the series that selector (a
// series selector such as {__name__=~"vllm:.+", cluster="eu-1"}) matches.
func (c *Client) MetricNames(ctx context.Context, sel string, start, end time.Time) ([]string, error) {
	return c.LabelValues(ctx, model.MetricNameLabel, sel, start, end)
}

// LabelValues lists values of label among series matching selector.
func (c *Client) LabelValues(ctx context.Context, label, selector string, start, end time.Time) ([]string, error) {
	vals, _, _, err := c.api.LabelValues(ctx, label, []string{selector}, start, end)
	if err != nil {
		return nil, classify("label values", err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out, nil
}

// Query runs an instant query that must return a vector. The answer is
// decoded as it arrives, like QueryRange's: a fleet table reads a dozen
// vectors of a thousand samples, and client_golang's reflection-based
// decoding of them was most of the plugin's time.
func (c *Client) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	form := url.Values{"query": {expr}}
	if !ts.IsZero() {
		form.Set("time", formatTime(ts))
	}
	res, err := c.raw.stream(ctx, "/api/v1/query", form)
	if err != nil {
		return nil, nil, classify("query", err)
	}
	if res.resultType != "vector" {
		return nil, res.warnings, &Error{Op: "query", Kind: KindBadResponse, Err: fmt.Errorf("expected a vector, got %s", res.resultType)}
	}
	return res.matrix.Vector(), res.warnings, nil
}

// QueryRange runs a range query that must return a matrix. The answer is
// decoded as it arrives, straight into columns (see Series), never held
// whole in memory.
func (c *Client) QueryRange(ctx context.Context, expr string, r v1.Range) (Matrix, []string, error) {
	form := url.Values{"query": {expr}, "start": {formatTime(r.Start)}, "end": {formatTime(r.End)},
		"step": {strconv.FormatFloat(r.Step.Seconds(), 'f', -1, 64)}}
	res, err := c.raw.stream(ctx, "/api/v1/query_range", form)
	if err != nil {
		return nil, nil, classify("query_range", err)
	}
	if res.resultType != "matrix" {
		return nil, res.warnings, &Error{Op: "query_range", Kind: KindBadResponse, Err: fmt.Errorf("expected a matrix, got %q", res.resultType)}
	}
	return res.matrix, res.warnings, nil
}

// formatTime writes a time as Prometheus' API reads it (as client_golang does).
func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.Unix())+float64(t.Nanosecond())/1e9, 'f', -1, 64)
}

// rawClient implements api.Client: it adds typed errors for auth failures
// and a response size cap, which client_golang's own client lacks.
type rawClient struct {
	base    *url.URL
	hc      *http.Client
	maxBody int64
	// slots holds one token per request in flight (the concurrency cap).
	slots chan struct{}
}

var _ api.Client = (*rawClient)(nil)

func (r *rawClient) URL(ep string, args map[string]string) *url.URL {
	parts := strings.Split(path.Join(r.base.Path, ep), "/")
	for i, p := range parts {
		if v, ok := args[strings.TrimPrefix(p, ":")]; ok && strings.HasPrefix(p, ":") {
			parts[i] = v
		}
	}
	u := *r.base
	u.Path = strings.Join(parts, "/")
	return &u
}

func (r *rawClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	release, err := r.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	resp, err := r.hc.Do(req.WithContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp, nil, &Error{Kind: KindUnauthorized, Status: resp.StatusCode, Err: errors.New("credentials rejected")}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBody+1))
	if err != nil {
		return resp, nil, err
	}
	if int64(len(body)) > r.maxBody {
		return resp, nil, &Error{Kind: KindBadResponse, Status: resp.StatusCode, Err: fmt.Errorf("response larger than %d bytes; narrow the query or the time range", r.maxBody)}
	}
	if resp.StatusCode/100 == 5 && !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp, nil, &Error{Kind: KindServer, Status: resp.StatusCode, Err: fmt.Errorf("%s", firstLine(body))}
	}
	return resp, body, nil
}

// firstLine trims a non-JSON error body to something fit for a message.
func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "empty body"
	}
	return s
}
