package agentapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	jsoniter "github.com/json-iterator/go"
)

// Defaults for Options.
const (
	DefaultConcurrency = 64
	DefaultTimeout     = 2 * time.Second
	// DefaultMaxIdleConns keeps a connection to each of up to this many
	// agents open between dashboard refreshes.
	DefaultMaxIdleConns = 1024
	// maxBody bounds one agent's answer; a node's report is a few kB.
	maxBody = 4 << 20
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// Timeout bounds each agent's request, from connect to the last byte.
	Timeout time.Duration
	// Concurrency is the most agents asked at once.
	Concurrency int
	// Token, when set, is sent as "Authorization: Bearer <token>". It is
	// never logged, put in a URL or in an error message.
	Token string
	// MaxIdleConns is the most idle connections kept across all agents.
	MaxIdleConns int
}

// Client fetches /v1/gpus from node agents. It is safe for concurrent use.
type Client struct {
	http *http.Client
	// transport is under the SDK's middlewares, for Close.
	transport   *http.Transport
	timeout     time.Duration
	concurrency int
	token       string
}

// AgentReport is one agent's answer.
type AgentReport struct {
	// URL is the agent's base URL as given to Fetch.
	URL    string
	Report Report
	// Latency is how long the agent took to answer.
	Latency time.Duration
}

// AgentError says why one agent gave no report. Its message names the
// agent URL (without any credentials) and never carries the token.
type AgentError struct {
	URL string
	Err error
}

// Error implements error.
func (e *AgentError) Error() string {
	return fmt.Sprintf("node agent %s: %v", RedactURL(e.URL), e.Err)
}

// Unwrap returns the cause.
func (e *AgentError) Unwrap() error { return e.Err }

// Result is what Fetch found: reports and errors, each in the order of the
// URLs given. A failing agent is an entry in Errors, never a failed call.
type Result struct {
	// Time is when the fetch started.
	Time    time.Time
	Reports []AgentReport
	Errors  []*AgentError
}

// NewClient builds a Client on the plugin SDK's HTTP client.
func NewClient(o Options) (*Client, error) {
	o = withDefaults(o)
	timeouts := httpclient.DefaultTimeoutOptions
	// Each request's context carries the per-agent deadline; the client's
	// own timeouts are only a backstop, so that the context always fires
	// first and the error says which deadline passed.
	timeouts.Timeout = 2 * o.Timeout
	timeouts.DialTimeout = 2 * o.Timeout
	timeouts.MaxIdleConns = o.MaxIdleConns
	timeouts.MaxIdleConnsPerHost = 2
	c := &Client{timeout: o.Timeout, concurrency: o.Concurrency, token: o.Token}
	hc, err := httpclient.New(httpclient.Options{
		Timeouts:           &timeouts,
		ConfigureClient:    func(_ httpclient.Options, hc *http.Client) { hc.CheckRedirect = noRedirects },
		ConfigureTransport: func(_ httpclient.Options, t *http.Transport) { c.transport = t },
	})
	if err != nil {
		return nil, fmt.Errorf("node agent HTTP client: %w", err)
	}
	c.http = hc
	return c, nil
}

// Close closes idle connections to the agents; call it when the data
// source instance is disposed.
func (c *Client) Close() {
	if c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

func withDefaults(o Options) Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	return o
}

// noRedirects keeps the token from following a redirect anywhere.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Fetch asks every agent at once, at most Concurrency at a time, each within
// the per-agent timeout (which starts when that agent's turn comes, so give
// ctx the query's own deadline). It returns when every agent has answered,
// failed or timed out; once ctx ends, the agents not yet asked fail at once
// with ctx's error.
func (c *Client) Fetch(ctx context.Context, urls []string) Result {
	res := Result{Time: time.Now()}
	reports := make([]*AgentReport, len(urls))
	errs := make([]*AgentError, len(urls))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(c.concurrency, len(urls)) {
		wg.Go(func() {
			for i := range jobs {
				reports[i], errs[i] = c.fetchOne(ctx, urls[i])
			}
		})
	}
	for i := range urls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	res.Reports, res.Errors = split(reports, errs)
	return res
}

// split keeps, in order, the reports of the agents that answered and the
// errors of those that did not.
func split(reports []*AgentReport, errs []*AgentError) ([]AgentReport, []*AgentError) {
	var ok []AgentReport
	var failed []*AgentError
	for i := range reports {
		if errs[i] != nil {
			failed = append(failed, errs[i])
		} else {
			ok = append(ok, *reports[i])
		}
	}
	return ok, failed
}

// fetchOne asks one agent within the per-agent timeout.
func (c *Client) fetchOne(ctx context.Context, base string) (*AgentReport, *AgentError) {
	if err := ctx.Err(); err != nil {
		return nil, &AgentError{URL: base, Err: fmt.Errorf("not asked: %w", err)}
	}
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	rep, err := c.get(actx, base)
	if err != nil {
		return nil, &AgentError{URL: base, Err: c.explain(ctx, actx, err)}
	}
	return &AgentReport{URL: base, Report: rep, Latency: time.Since(start)}, nil
}

// explain turns transport errors into short messages: the caller's own
// cancellation, the per-agent timeout, or the transport's cause (*url.Error
// repeats the URL, which AgentError already names).
func (c *Client) explain(parent, agentCtx context.Context, err error) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("query ended before the agent answered: %w", perr)
	}
	if errors.Is(agentCtx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", c.timeout, context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) get(ctx context.Context, base string) (Report, error) {
	endpoint, err := gpusURL(base)
	if err != nil {
		return Report{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return Report{}, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Report{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	return decode(resp)
}

// decode reads a 200 answer as a Report, anything else as an error that
// quotes the start of the agent's body.
func decode(resp *http.Response) (Report, error) {
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return Report{}, &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return Report{}, fmt.Errorf("reading answer: %w", err)
	}
	if len(b) > maxBody {
		return Report{}, fmt.Errorf("answer larger than %d MiB", maxBody>>20)
	}
	var rep Report
	if err := reportJSON.Unmarshal(b, &rep); err != nil {
		return Report{}, fmt.Errorf("invalid JSON from agent: %w", err)
	}
	return rep, nil
}

// reportJSON decodes agents' answers. A fan-out decodes a thousand of them
// at once, and encoding/json's reflection and validation pass were a third
// of the client's CPU per fan-out (BenchmarkFanOut1000's profile); the SDK's
// json-iterator, in its standard-library-compatible mode, reads the same
// fields the same way at a fraction of the cost.
var reportJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// StatusError is a non-200 answer from an agent.
type StatusError struct {
	Code int
	// Body is the start of the agent's answer, for the message.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	if e.Code == http.StatusUnauthorized {
		msg += " (check the agent token)"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// gpusURL appends GPUsPath to an agent's base URL, unless it is there.
func gpusURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("not an http(s) URL with a host")
	}
	if !strings.HasSuffix(u.Path, GPUsPath) {
		u.Path = strings.TrimSuffix(u.Path, "/") + GPUsPath
	}
	return u.String(), nil
}

// RedactURL drops any user info from a URL so it can be shown.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid URL>"
	}
	u.User = nil
	return u.String()
}
