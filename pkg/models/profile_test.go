package models

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProfiles(t *testing.T) {
	tests := []struct {
		name     string
		json     string
		prefixes []string
		identity []string
		instance string
		exclude  string
		wantErr  string
	}{
		{name: "default is plain Prometheus", json: `{}`, prefixes: []string{"vllm:"}, identity: []string{"instance"}, instance: "instance"},
		{name: "production-stack excludes the router", json: `{"profile":"production-stack"}`, prefixes: []string{"vllm:"},
			identity: []string{"namespace", "pod"}, instance: "pod", exclude: `model_name!="", server=""`},
		{name: "llm-d", json: `{"profile":"llm-d"}`, prefixes: []string{"vllm:"}, identity: []string{"namespace", "pod"}, instance: "pod"},
		{name: "kserve", json: `{"profile":"kserve"}`, prefixes: []string{"vllm:"}, identity: []string{"namespace", "pod"}, instance: "pod"},
		{name: "ray-serve accepts both spellings", json: `{"profile":"ray-serve"}`, prefixes: []string{"ray_vllm:", "ray_vllm_"},
			identity: []string{"namespace", "ReplicaId"}, instance: "ReplicaId"},
		{name: "explicit instanceLabel and prefix win", json: `{"profile":"ray-serve","instanceLabel":"pod","metricPrefix":"ray_vllm:"}`,
			prefixes: []string{"ray_vllm:"}, identity: []string{"pod"}, instance: "pod"},
		{name: "unknown profile", json: `{"profile":"k8s"}`, wantErr: `profile "k8s" is not one of kserve, llm-d, production-stack, prometheus, ray-serve`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fromJSON("http://p", mustJSON(t, tt.json))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.prefixes, s.MetricPrefixes)
			require.Equal(t, tt.prefixes[0], s.MetricPrefix)
			require.Equal(t, tt.identity, s.Identity)
			require.Equal(t, tt.instance, s.InstanceLabel)
			require.Equal(t, tt.exclude, MatchersString(s.Exclude))
		})
	}
}

func mustJSON(t *testing.T, raw string) jsonSettings {
	t.Helper()
	var js jsonSettings
	require.NoError(t, json.Unmarshal([]byte(raw), &js))
	return js
}
