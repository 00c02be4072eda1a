package models

import (
	"errors"
	"fmt"
	"testing"
	"time"

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
	require.Equal(t, "{URLs:[http://a:9400] Job:j Timeout:1s Token:}", AgentSettings{URLs: []string{"http://a:9400"}, Job: "j", Timeout: time.Second}.String())
}
