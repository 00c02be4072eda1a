package models

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/stretchr/testify/require"
)

func TestParseAgentSettings(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		secure  map[string]string
		want    AgentSettings
		wantErr string
	}{
		{name: "defaults", json: `{}`, want: AgentSettings{Job: "vllm-node-agent", Timeout: 2 * time.Second}},
		{name: "no jsonData", json: ``, want: AgentSettings{Job: "vllm-node-agent", Timeout: 2 * time.Second}},
		{name: "all fields", json: `{"agentUrls":["http://gpu-1:9400","https://gpu-2.example:9400/"],"agentJob":"gpu-agents","agentTimeout":"500ms","prometheusUrl":"x"}`,
			secure: map[string]string{"agentToken": " tok\n", "basicAuthPassword": "other"},
			want:   AgentSettings{URLs: []string{"http://gpu-1:9400", "https://gpu-2.example:9400"}, Job: "gpu-agents", Timeout: 500 * time.Millisecond, Token: "tok"}},
		{name: "blanks skipped, duplicates dropped", json: `{"agentUrls":[" ","http://a:9400","http://a:9400/",""," http://b:9400 "]}`,
			want: AgentSettings{URLs: []string{"http://a:9400", "http://b:9400"}, Job: "vllm-node-agent", Timeout: 2 * time.Second}},
		{name: "grafana duration", json: `{"agentTimeout":"1m"}`, want: AgentSettings{Job: "vllm-node-agent", Timeout: time.Minute}},
		{name: "no scheme", json: `{"agentUrls":["http://ok:9400","gpu-1:9400"]}`, wantErr: `agentUrls[1] "gpu-1:9400" is not an http(s) URL with a host`},
		{name: "other scheme", json: `{"agentUrls":["ftp://gpu-1"]}`, wantErr: `agentUrls[0] "ftp://gpu-1" is not an http(s) URL`},
		{name: "no host", json: `{"agentUrls":["http:///v1/gpus"]}`, wantErr: `agentUrls[0]`},
		{name: "credentials refused", json: `{"agentUrls":["http://user:hunter2@gpu-1:9400"]}`, wantErr: "agentUrls[0] must not contain credentials"},
		{name: "unparseable with credentials", json: `{"agentUrls":["http://user:hunter2@[gpu"]}`, wantErr: "agentUrls[0]"},
		{name: "urls not an array", json: `{"agentUrls":"http://a:9400"}`, wantErr: "jsonData is not valid JSON"},
		{name: "agent selector", json: `{"agentSelector":"{cluster=\"eu-1\"}"}`,
			want: AgentSettings{Job: "vllm-node-agent", Selector: mustParse(t, `cluster="eu-1"`), SelectorSet: true, Timeout: 2 * time.Second}},
		{name: "agent selector {} is set, and empty", json: `{"agentSelector":"{}"}`,
			want: AgentSettings{Job: "vllm-node-agent", SelectorSet: true, Timeout: 2 * time.Second}},
		{name: "agent selector not matchers", json: `{"agentSelector":"sum(up)"}`, wantErr: `agentSelector "sum(up)"`},
		{name: "bad timeout", json: `{"agentTimeout":"soon"}`, wantErr: `agentTimeout "soon" is not a duration`},
		{name: "zero timeout", json: `{"agentTimeout":"0s"}`, wantErr: `agentTimeout "0s"`},
		{name: "huge timeout", json: `{"agentTimeout":"1h"}`, wantErr: `agentTimeout "1h"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAgentSettings([]byte(tt.json), tt.secure)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, errors.Is(err, ErrInvalidSettings))
				require.NotContains(t, err.Error(), "hunter2")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAgentSettingsNeverPrintsToken(t *testing.T) {
	s := AgentSettings{URLs: []string{"http://a:9400"}, Job: "j", Timeout: time.Second, Token: "s3cret"}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, s)
		require.NotContains(t, out, "s3cret", format)
		require.Contains(t, out, "[redacted]", format)
	}
	require.Equal(t, "{URLs:[http://a:9400] Job:j Selector:{} Timeout:1s Token:}", AgentSettings{URLs: []string{"http://a:9400"}, Job: "j", Timeout: time.Second}.String())
}

func mustParse(t *testing.T, text string) []*labels.Matcher {
	t.Helper()
	ms, err := ParseMatchers("test", text)
	require.NoError(t, err)
	return ms
}

// TestAgentDiscoveryScope: without agentSelector, discovery keeps the data
// source selector's cluster-wide matchers and drops the ones that pick vLLM
// pods (the agents run in their own namespace); agentSelector replaces it.
func TestAgentDiscoveryScope(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"no selectors", `{}`, ``},
		{"namespace only: the agents live elsewhere", `{"selector":"namespace=\"inference\""}`, ``},
		{"cluster kept, namespace dropped", `{"selector":"cluster=\"eu-1\", namespace=~\"a|b\""}`, `cluster="eu-1"`},
		{"pod-level and vLLM labels dropped", `{"selector":"region!=\"us\", pod=~\"v.*\", container=\"c\", service=\"s\", endpoint=\"e\", node=\"n\", instance=\"i\", job=\"j\", model_name=\"m\", engine=\"0\""}`, `region!="us"`},
		{"the fleet's instance label dropped", `{"instanceLabel":"server","selector":"server=\"a\", env=\"prod\""}`, `env="prod"`},
		{"the profile's identity dropped", `{"profile":"ray-serve","selector":"ReplicaId=\"r\", env=\"prod\""}`, `env="prod"`},
		{"agentSelector wins", `{"selector":"cluster=\"eu-1\"","agentSelector":"cluster=\"eu-2\", namespace=\"monitoring\""}`, `cluster="eu-2", namespace="monitoring"`},
		{"blank agentSelector is unset", `{"selector":"cluster=\"eu-1\", pod=\"p\"","agentSelector":" "}`, `cluster="eu-1"`},
		{"agentSelector {} means no scope", `{"selector":"cluster=\"eu-1\"","agentSelector":"{}"}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings(Instance{URL: "http://prometheus:9090", JSONData: []byte(tt.json)})
			require.NoError(t, err)
			require.Equal(t, tt.want, MatchersString(s.Agents.Selector))
		})
	}
}
