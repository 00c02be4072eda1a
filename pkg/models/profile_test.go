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
		{name: "kserve reads its monitors' renamed names and plain ones", json: `{"profile":"kserve"}`, prefixes: []string{"kserve_vllm:", "vllm:"},
			identity: []string{"namespace", "pod"}, instance: "pod"},
		{name: "auto is plain Prometheus until resolved", json: `{"profile":"auto"}`, prefixes: []string{"vllm:"}, identity: []string{"instance"}, instance: "instance"},
		{name: "ray-serve accepts both spellings", json: `{"profile":"ray-serve"}`, prefixes: []string{"ray_vllm:", "ray_vllm_"},
			identity: []string{"namespace", "ReplicaId"}, instance: "ReplicaId"},
		{name: "explicit instanceLabel and prefix win", json: `{"profile":"ray-serve","instanceLabel":"pod","metricPrefix":"ray_vllm:"}`,
			prefixes: []string{"ray_vllm:"}, identity: []string{"pod"}, instance: "pod"},
		{name: "unknown profile", json: `{"profile":"k8s"}`, wantErr: `profile "k8s" is not one of auto, kserve, llm-d, production-stack, prometheus, ray-serve`},
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

// TestWithProfile: auto (empty or "auto") resolves to any stack's profile
// with that profile's prefixes and identity; an explicit profile is not
// auto; explicit instanceLabel and metricPrefix win over a resolved one.
func TestWithProfile(t *testing.T) {
	tests := []struct {
		name, json, resolve string
		auto                bool
		prefixes, identity  []string
		gateway             []string
	}{
		{"empty is auto", `{}`, ProfileProductionStack, true, []string{"vllm:"}, []string{"namespace", "pod"}, nil},
		{"auto to kserve", `{"profile":"auto"}`, ProfileKServe, true, []string{"kserve_vllm:", "vllm:"}, []string{"namespace", "pod"}, []string{"kserve_", ""}},
		{"auto to ray-serve", `{"profile":"auto"}`, ProfileRayServe, true, []string{"ray_vllm:", "ray_vllm_"}, []string{"namespace", "ReplicaId"}, nil},
		{"auto to llm-d", `{"profile":"auto"}`, ProfileLLMD, true, []string{"vllm:"}, []string{"namespace", "pod"}, nil},
		{"explicit is not auto", `{"profile":"llm-d"}`, ProfileLLMD, false, []string{"vllm:"}, []string{"namespace", "pod"}, nil},
		{"overrides win over the resolved profile", `{"instanceLabel":"pod","metricPrefix":"x_vllm:"}`, ProfileKServe, true,
			[]string{"x_vllm:"}, []string{"pod"}, []string{"kserve_", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fromJSON("http://p", mustJSON(t, tt.json))
			require.NoError(t, err)
			require.Equal(t, tt.auto, s.AutoProfile)
			r, err := s.WithProfile(tt.resolve, "because")
			require.NoError(t, err)
			require.Equal(t, tt.resolve, r.Profile)
			require.Equal(t, tt.auto, r.AutoProfile)
			require.Equal(t, "because", r.ProfileEvidence)
			require.Equal(t, tt.prefixes, r.MetricPrefixes)
			require.Equal(t, tt.prefixes[0], r.MetricPrefix)
			require.Equal(t, tt.identity, r.Identity)
			require.Equal(t, tt.identity[len(tt.identity)-1], r.InstanceLabel)
			require.Equal(t, tt.gateway, r.GatewayPrefixes)
		})
	}
	_, err := Settings{}.WithProfile(ProfileAuto, "")
	require.ErrorIs(t, err, ErrInvalidSettings, "auto is no stack")
}
