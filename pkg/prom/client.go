package prom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
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

// Options configures a Client.
type Options struct {
	URL          string
	HTTP         httpclient.Options
	MaxBodyBytes int64
}

// Client talks to one Prometheus-compatible server.
type Client struct {
	api  v1.API
	base *url.URL
}

// New builds a client. The HTTP options carry Grafana's auth, headers and TLS.
func New(opts Options) (*Client, error) {
	base, err := url.Parse(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("parse prometheus url: %w", err)
	}
	hc, err := httpclient.New(opts.HTTP)
	if err != nil {
		return nil, fmt.Errorf("build http client: %w", err)
	}
	max := opts.MaxBodyBytes
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	raw := &rawClient{base: base, hc: hc, maxBody: max}
	return &Client{api: v1.NewAPI(raw), base: base}, nil
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
	vals, _, _, err := c.api.LabelValues(ctx, model.MetricNameLabel, []string{sel}, start, end)
	if err != nil {
		return nil, classify("label values", err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out, nil
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

// Query runs an instant query that must return a vector.
func (c *Client) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	val, warn, _, err := c.api.Query(ctx, expr, ts)
	if err != nil {
		return nil, nil, classify("query", err)
	}
	vec, ok := val.(model.Vector)
	if !ok {
		return nil, warn, &Error{Op: "query", Kind: KindBadResponse, Err: fmt.Errorf("expected a vector, got %s", val.Type())}
	}
	return vec, warn, nil
}

// QueryRange runs a range query that must return a matrix.
func (c *Client) QueryRange(ctx context.Context, expr string, r v1.Range) (model.Matrix, []string, error) {
	val, warn, _, err := c.api.QueryRange(ctx, expr, r)
	if err != nil {
		return nil, nil, classify("query_range", err)
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, warn, &Error{Op: "query_range", Kind: KindBadResponse, Err: fmt.Errorf("expected a matrix, got %s", val.Type())}
	}
	return m, warn, nil
}

// rawClient implements api.Client: it adds typed errors for auth failures
// and a response size cap, which client_golang's own client lacks.
type rawClient struct {
	base    *url.URL
	hc      *http.Client
	maxBody int64
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
