package models

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/interval"
)

// Defaults for the node-agent settings.
const (
	DefaultAgentJob     = "vllm-node-agent"
	DefaultAgentTimeout = 2 * time.Second
	// maxAgentTimeout keeps one slow agent from holding a query for long.
	maxAgentTimeout = time.Minute
)

// AgentSettings say how the data source reaches vllm-node-agents.
type AgentSettings struct {
	// URLs are the agents' base URLs (static list), e.g. http://gpu-node-1:9400.
	URLs []string
	// Job is the Prometheus job that scrapes the agents, for discovery.
	Job string
	// Selector scopes discovery, e.g. cluster="eu-1" in a store several
	// clusters write to: jsonData.agentSelector when SelectorSet, else
	// ParseSettings derives it from the data source's selector (AgentScope).
	Selector []*labels.Matcher
	// SelectorSet says agentSelector was given, not blank ("{}" for no scope).
	SelectorSet bool
	// Timeout bounds each agent's answer.
	Timeout time.Duration
	// Token is the agents' bearer token (from secureJsonData.agentToken).
	// String and GoString redact it so it cannot be logged by accident.
	Token string
}

// String shows the settings with the token redacted.
func (s AgentSettings) String() string {
	tok := ""
	if s.Token != "" {
		tok = "[redacted]"
	}
	return fmt.Sprintf("{URLs:%v Job:%s Selector:{%s} Timeout:%s Token:%s}", s.URLs, s.Job, MatchersString(s.Selector), s.Timeout, tok)
}

// GoString redacts the token under %#v too.
func (s AgentSettings) GoString() string { return "models.AgentSettings" + s.String() }

// jsonAgentSettings is the jsonData shape the config editor writes.
type jsonAgentSettings struct {
	AgentURLs     []string `json:"agentUrls"`
	AgentJob      string   `json:"agentJob"`
	AgentSelector *string  `json:"agentSelector"` // nil: not set, derive it
	AgentTimeout  string   `json:"agentTimeout"`
}

// ParseAgentSettings reads jsonData.agentUrls, agentJob (default
// vllm-node-agent), agentSelector (unset: ParseSettings derives it from
// selector), agentTimeout (default 2s) and secureJsonData.agentToken.
// Blank URLs are skipped and duplicates dropped. Every error names the field
// and wraps ErrInvalidSettings.
func ParseAgentSettings(jsonData []byte, secure map[string]string) (AgentSettings, error) {
	var js jsonAgentSettings
	if len(jsonData) > 0 {
		if err := json.Unmarshal(jsonData, &js); err != nil {
			return AgentSettings{}, fmt.Errorf("%w: agent settings: jsonData is not valid JSON: %w", ErrInvalidSettings, err)
		}
	}
	urls, err := agentURLs(js.AgentURLs)
	if err != nil {
		return AgentSettings{}, err
	}
	timeout, err := agentTimeout(js.AgentTimeout)
	if err != nil {
		return AgentSettings{}, err
	}
	out := AgentSettings{URLs: urls, Job: strings.TrimSpace(js.AgentJob), Timeout: timeout, Token: strings.TrimSpace(secure[SecureAgentToken])}
	if out.Job == "" {
		out.Job = DefaultAgentJob
	}
	// Blank is unset (a cleared field in the editor); "{}" is the way to say
	// "no scope at all".
	if js.AgentSelector != nil && strings.TrimSpace(*js.AgentSelector) != "" {
		out.SelectorSet = true
		if out.Selector, err = ParseMatchers("agentSelector", *js.AgentSelector); err != nil {
			return AgentSettings{}, fmt.Errorf("%w: %w", ErrInvalidSettings, err)
		}
	}
	return out, nil
}

// placementLabels are labels that say where in a cluster a target runs, or
// what a vLLM series is about, rather than which cluster or store it comes
// from. A data source selector on them picks vLLM pods; the agents' up never
// carries the fleet's values (the DaemonSet has its own namespace and pods,
// and up has no model_name), so discovery must not inherit them.
var placementLabels = map[string]bool{
	"namespace": true, "pod": true, "container": true, "service": true, "endpoint": true, "node": true,
	"instance": true, "job": true, "model_name": true, "engine": true,
}

// AgentScope is the agent-discovery scope a data source selector implies
// when agentSelector is not set: its matchers on every label except the
// placement labels and the fleet's identity labels. cluster="eu-1",
// namespace="inference" keeps cluster="eu-1", so a shared store's other
// clusters' agents are not asked, while the agents in namespace monitoring
// are still found.
func AgentScope(fleet []*labels.Matcher, identity ...string) []*labels.Matcher {
	var out []*labels.Matcher
	for _, m := range fleet {
		if !placementLabels[m.Name] && !slices.Contains(identity, m.Name) {
			out = append(out, m)
		}
	}
	return out
}

// agentURLs validates each URL: http(s), a host, no credentials.
func agentURLs(raw []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for i, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: agentUrls[%d] %q is not an http(s) URL with a host, e.g. http://gpu-node-1:9400", ErrInvalidSettings, i, redactURL(r))
		}
		if u.User != nil {
			return nil, fmt.Errorf("%w: agentUrls[%d] must not contain credentials; set the agent token instead", ErrInvalidSettings, i)
		}
		r = strings.TrimSuffix(r, "/")
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}

func agentTimeout(raw string) (time.Duration, error) {
	if strings.TrimSpace(raw) == "" {
		return DefaultAgentTimeout, nil
	}
	d, err := interval.ParseDuration(strings.TrimSpace(raw))
	if err != nil || d <= 0 || d > maxAgentTimeout {
		return 0, fmt.Errorf("%w: agentTimeout %q is not a duration between 1ms and 1m, such as 2s or 500ms", ErrInvalidSettings, raw)
	}
	return d, nil
}
