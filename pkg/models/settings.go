package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

// Defaults for the data-source settings. They match what vLLM and a stock
// Prometheus use so a fresh data source works without touching them.
const (
	DefaultScrapeInterval = 15 * time.Second
	DefaultQueryTimeout   = 30 * time.Second
	DefaultInstanceLabel  = "instance"
	DefaultMetricPrefix   = "vllm:"
	// DefaultMaxConcurrentQueries stays below Prometheus' own
	// --query.max-concurrency (20), so a crowd queues in the plugin, where
	// each waiting query honours its deadline, and not inside Prometheus.
	DefaultMaxConcurrentQueries = 10
	// MaxConcurrentQueriesLimit is the largest value the setting accepts.
	MaxConcurrentQueriesLimit = 100
	// DefaultIncrementalOverlap is how many minutes before the moment of a
	// fetch a range answer is asked for again (Grafana's Prometheus source
	// uses the same default): samples arrive up to a scrape late, later
	// still through remote write.
	DefaultIncrementalOverlap = 10 * time.Minute
	// DefaultStallWindow is how long an engine with requests running or
	// waiting must make no progress to be stalled: the for-less window of
	// the VLLMEngineStalled alert (deploy/prometheus/rules/vllm.rules.yml).
	DefaultStallWindow = 3 * time.Minute
	// PrometheusScrapeTimeout is Prometheus' global default scrape_timeout
	// (config.DefaultGlobalConfig), the timeout a job without its own has.
	PrometheusScrapeTimeout = 10 * time.Second
)

// AssumedScrapeTimeout is the scrape timeout of a target whose Prometheus
// does not store scrape_timeout_seconds (no extra scrape metrics): its
// default, 10s, capped by the scrape interval, as Prometheus' config
// loading caps a job's inherited timeout (ScrapeConfig.Validate: a global
// timeout longer than the job's interval becomes the interval).
func AssumedScrapeTimeout(scrapeInterval time.Duration) time.Duration {
	if scrapeInterval <= 0 {
		return PrometheusScrapeTimeout
	}
	return min(PrometheusScrapeTimeout, scrapeInterval)
}

// ErrInvalidSettings is wrapped by every settings validation error so callers
// can tell a configuration mistake from an infrastructure failure.
var ErrInvalidSettings = errors.New("invalid data source settings")

var (
	labelNameRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	metricPrefRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
)

// Settings is the validated configuration of one data-source instance.
// Secrets never live here in plain fields that could be logged: the HTTP
// options carry them to the transport and nowhere else.
type Settings struct {
	// URL is the Prometheus (or compatible) base URL.
	URL string
	// ScrapeInterval is Prometheus' scrape interval, used for step and
	// $__rate_interval math.
	ScrapeInterval time.Duration
	// QueryTimeout bounds each request to Prometheus.
	QueryTimeout time.Duration
	// InstanceLabel is the label that identifies one vLLM server
	// (instance by default, often pod on Kubernetes).
	InstanceLabel string
	// MetricPrefix replaces "vllm:" in every metric name (ray_vllm: on Ray Serve).
	MetricPrefix string
	// MaxConcurrentQueries caps the requests this data source has in
	// flight to Prometheus at once; more wait their turn.
	MaxConcurrentQueries int
	// Incremental: a range that repeats an earlier one's expression and step
	// (a dashboard ending now, refreshed) asks Prometheus only for the steps
	// after the earlier answer's final part. On unless turned off.
	Incremental bool
	// IncrementalOverlap is how far before the moment of a fetch its steps
	// may still change, and are asked for again.
	IncrementalOverlap time.Duration
	// Agents says how to reach the node agents (GPU data).
	Agents AgentSettings
	// Selector scopes the data source to one fleet in a shared store: label
	// matchers added to every series selector the plugin writes (queries,
	// detection, health, resource routes, agent discovery). Parsed by
	// Prometheus' parser from jsonData.selector; nil selects everything.
	Selector []*labels.Matcher
	// Saturation holds the thresholds of the saturation verdicts.
	Saturation SaturationSettings
	// Cost prices the GPUs for the capacity query's efficiency columns.
	Cost CostSettings
	// Container says how cAdvisor's series join the vLLM servers
	// (container.go).
	Container ContainerSettings
	// StallWindow: an engine that is up with requests running or waiting
	// throughout it, and none of whose token and request counters moved
	// over it, is stalled (jsonData.stallWindow, at least two scrapes).
	StallWindow time.Duration
	// Profile is the serving stack's profile (profile.go), under auto the
	// one detection chose (WithProfile); it sets the fields below, which
	// explicit instanceLabel/metricPrefix override.
	Profile string
	// MetricPrefixes are every prefix queries accept, MetricPrefix first.
	MetricPrefixes []string
	// Identity are the labels that identify one vLLM server (instance, or
	// namespace+pod on Kubernetes); InstanceLabel is the last of them.
	Identity []string
	// Exclude matchers keep series that share vLLM's names but are not
	// engines (production-stack's router) out of engine queries.
	Exclude []*labels.Matcher
	// Gateway: the stack runs an endpoint picker whose view the queue shows.
	Gateway bool
	// GatewayPrefixes go before the picker's metric names ("" for its own
	// names, kserve_ on KServe); empty means its own names only.
	GatewayPrefixes []string
	// AutoProfile: jsonData.profile is auto (or empty), so Profile is what
	// stack detection chose (plain Prometheus until it has run), and
	// ProfileEvidence says why.
	AutoProfile     bool
	ProfileEvidence string
	// RoleLabel is the label that carries an engine's prefill/decode role
	// (jsonData.roleLabel); empty tries the labels the known stacks use
	// (KServe's llm_isvc_role, llm-d's pod label as scraped).
	RoleLabel string
	// RecordingRules: when queries are planned on the shipped recording
	// rules (jsonData.recordingRules: exact unless "nearest" or "off";
	// true and false mean exact and off); RulePrefix is their names'
	// prefix (jsonData.rulePrefix, engine:).
	RecordingRules RulesPolicy
	RulePrefix     string
	// overrides are the explicit instanceLabel and metricPrefix, kept so a
	// profile resolved later (auto) still yields to them.
	overrides profileOverrides
}

// jsonSettings is the jsonData shape the config editor writes.
type jsonSettings struct {
	PrometheusURL  string `json:"prometheusUrl"`
	ScrapeInterval string `json:"scrapeInterval"`
	QueryTimeout   string `json:"queryTimeout"`
	InstanceLabel  string `json:"instanceLabel"`
	MetricPrefix   string `json:"metricPrefix"`
	// MaxConcurrentQueries is a number; provisioning files sometimes quote it.
	MaxConcurrentQueries json.Number `json:"maxConcurrentQueries"`
	Selector             string      `json:"selector"`
	Profile              string      `json:"profile"`
	// IncrementalQuerying and IncrementalQueryOverlapWindow use the names
	// of Grafana's own Prometheus data source.
	IncrementalQuerying           *bool  `json:"incrementalQuerying"`
	IncrementalQueryOverlapWindow string `json:"incrementalQueryOverlapWindow"`
	StallWindow                   string `json:"stallWindow"`
	RoleLabel                     string `json:"roleLabel"`
	// RecordingRules is a policy name or, as earlier versions wrote it, a
	// boolean (parseRules).
	RecordingRules json.RawMessage `json:"recordingRules"`
	RulePrefix     string          `json:"rulePrefix"`
}

// Instance is what a data source instance's settings hold for the plugin
// (the fields of the SDK's backend.DataSourceInstanceSettings it reads,
// under their names there). Grafana's standard HTTP settings (auth,
// headers, TLS) are read by the SDK where the Prometheus client is built
// (pkg/plugin); this package does not import the SDK's backend, so that the
// fuzzers, which instrument every package a target imports, stay small.
type Instance struct {
	URL                     string
	JSONData                []byte
	DecryptedSecureJSONData map[string]string
}

// ParseSettings parses and validates instance settings. Every error names the
// field that is wrong and wraps ErrInvalidSettings.
func ParseSettings(s Instance) (Settings, error) {
	var js jsonSettings
	if len(s.JSONData) > 0 {
		if err := json.Unmarshal(s.JSONData, &js); err != nil {
			return Settings{}, fmt.Errorf("%w: jsonData is not valid JSON: %v", ErrInvalidSettings, err)
		}
	}
	out, err := fromJSON(s.URL, js)
	if err != nil {
		return Settings{}, err
	}
	if out.Agents, err = ParseAgentSettings(s.JSONData, s.DecryptedSecureJSONData); err != nil {
		return Settings{}, err
	}
	if !out.Agents.SelectorSet {
		out.Agents.Selector = AgentScope(out.Selector, append([]string{out.InstanceLabel}, out.Identity...)...)
	}
	if out.Saturation, err = ParseSaturationSettings(s.JSONData); err != nil {
		return Settings{}, err
	}
	if out.Cost, err = ParseCostSettings(s.JSONData); err != nil {
		return Settings{}, err
	}
	if out.Container, err = ParseContainerSettings(s.JSONData); err != nil {
		return Settings{}, err
	}
	return out, nil
}

// fromJSON applies defaults and validates the plugin's own fields.
func fromJSON(dsURL string, js jsonSettings) (Settings, error) {
	out := Settings{InstanceLabel: DefaultInstanceLabel, MetricPrefix: DefaultMetricPrefix}
	var err error
	if out.MaxConcurrentQueries, err = parseConcurrency(js.MaxConcurrentQueries); err != nil {
		return Settings{}, err
	}
	if out.URL, err = validateURL(dsURL, js.PrometheusURL); err != nil {
		return Settings{}, err
	}
	if out.ScrapeInterval, err = parseDuration("scrapeInterval", js.ScrapeInterval, DefaultScrapeInterval); err != nil {
		return Settings{}, err
	}
	if out.QueryTimeout, err = parseDuration("queryTimeout", js.QueryTimeout, DefaultQueryTimeout); err != nil {
		return Settings{}, err
	}
	if err := parseIncremental(&out, js); err != nil {
		return Settings{}, err
	}
	if err := parseRules(&out, js); err != nil {
		return Settings{}, err
	}
	if out.StallWindow, err = parseStallWindow(js.StallWindow, out.ScrapeInterval); err != nil {
		return Settings{}, err
	}
	if js.InstanceLabel != "" {
		if !labelNameRE.MatchString(js.InstanceLabel) {
			return Settings{}, fmt.Errorf("%w: instanceLabel %q is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)", ErrInvalidSettings, js.InstanceLabel)
		}
	}
	if js.RoleLabel != "" && !labelNameRE.MatchString(js.RoleLabel) {
		return Settings{}, fmt.Errorf("%w: roleLabel %q is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*), e.g. llm_isvc_role", ErrInvalidSettings, js.RoleLabel)
	}
	out.RoleLabel = js.RoleLabel
	if js.MetricPrefix != "" {
		if !metricPrefRE.MatchString(js.MetricPrefix) {
			return Settings{}, fmt.Errorf("%w: metricPrefix %q may only hold letters, digits, '_' and ':' (e.g. vllm: or ray_vllm:)", ErrInvalidSettings, js.MetricPrefix)
		}
	}
	if err := applyProfile(&out, js); err != nil {
		return Settings{}, err
	}
	if out.Selector, err = ParseMatchers("selector", js.Selector); err != nil {
		return Settings{}, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
	}
	return out, nil
}

// validateURL takes the data source's URL (what Grafana's HTTP settings
// component writes) and falls back to jsonData.prometheusUrl.
func validateURL(dsURL, jsonURL string) (string, error) {
	raw := dsURL
	if raw == "" {
		raw = jsonURL
	}
	if raw == "" {
		return "", fmt.Errorf("%w: url is empty: set the Prometheus URL, e.g. http://prometheus:9090", ErrInvalidSettings)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: url %q is not an http(s) URL with a host, e.g. http://prometheus:9090", ErrInvalidSettings, redactURL(raw))
	}
	if u.User != nil {
		// Credentials in the URL would end up in logs and error messages.
		return "", fmt.Errorf("%w: url must not contain credentials; use basic auth in the HTTP settings", ErrInvalidSettings)
	}
	return raw, nil
}

// redactURL drops any user info so an invalid URL can be echoed safely.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable>"
	}
	u.User = nil
	return u.String()
}

// parseDuration parses a Grafana-style duration ("15s", "1m") for a field.
func parseDuration(field, raw string, def time.Duration) (time.Duration, error) {
	if raw == "" {
		return def, nil
	}
	d, err := interval.ParseDuration(raw)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s %q is not a positive duration such as 15s or 1m", ErrInvalidSettings, field, raw)
	}
	return d, nil
}

// parseStallWindow reads stallWindow, which must cover at least two
// scrapes: a counter needs two samples in the window to show an increase,
// so a shorter window would call every engine stalled. Unset, it is the
// default or two scrapes, whichever is longer.
func parseStallWindow(raw string, scrape time.Duration) (time.Duration, error) {
	if raw == "" {
		return max(DefaultStallWindow, 2*scrape), nil
	}
	d, err := parseDuration("stallWindow", raw, DefaultStallWindow)
	if err != nil {
		return 0, err
	}
	if d < 2*scrape {
		return 0, fmt.Errorf("%w: stallWindow %q is shorter than two scrape intervals (%s); a counter needs two samples in it to show progress",
			ErrInvalidSettings, raw, 2*scrape)
	}
	return d, nil
}

// parseIncremental reads incrementalQuerying (default on) and its overlap,
// which must cover at least two scrapes: a series that stops is marked
// stale only at the first scrape that fails, up to a scrape (and its
// timeout) after its last sample, and a shorter overlap would keep steps
// from before that mark arrived.
func parseIncremental(out *Settings, js jsonSettings) error {
	out.Incremental = js.IncrementalQuerying == nil || *js.IncrementalQuerying
	d, err := parseDuration("incrementalQueryOverlapWindow", js.IncrementalQueryOverlapWindow, DefaultIncrementalOverlap)
	if err != nil {
		return err
	}
	if d < 2*out.ScrapeInterval {
		return fmt.Errorf("%w: incrementalQueryOverlapWindow %q is shorter than two scrape intervals (%s); late samples and staleness marks would be missed",
			ErrInvalidSettings, js.IncrementalQueryOverlapWindow, 2*out.ScrapeInterval)
	}
	out.IncrementalOverlap = d
	return nil
}

// parseConcurrency reads maxConcurrentQueries: a whole number 1–100.
func parseConcurrency(raw json.Number) (int, error) {
	if raw == "" {
		return DefaultMaxConcurrentQueries, nil
	}
	n, err := raw.Int64()
	if err != nil || n < 1 || n > MaxConcurrentQueriesLimit {
		return 0, fmt.Errorf("%w: maxConcurrentQueries %q is out of range; allowed: whole numbers 1 to %d (default %d, below Prometheus' own limit of 20)",
			ErrInvalidSettings, raw.String(), MaxConcurrentQueriesLimit, DefaultMaxConcurrentQueries)
	}
	return int(n), nil
}
