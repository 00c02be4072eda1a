package models

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSettingKeys(t *testing.T) {
	keys := SettingKeys()
	tests := []struct {
		name string
		list []string
		want []string
	}{
		{"jsonData: the plugin's own settings", keys.JSONData, []string{"prometheusUrl", "scrapeInterval", "queryTimeout",
			"instanceLabel", "metricPrefix", "maxConcurrentQueries", "selector", "profile", "incrementalQuerying",
			"incrementalQueryOverlapWindow", "stallWindow"}},
		{"jsonData: node agents", keys.JSONData, []string{"agentUrls", "agentJob", "agentSelector", "agentTimeout"}},
		{"jsonData: saturation thresholds", keys.JSONData, []string{"saturationKvHigh", "saturationQueue",
			"saturationPreemptions", "saturationIdle"}},
		{"jsonData: HTTP settings", keys.JSONData, []string{"httpHeaderName1", "tlsAuth", "tlsSkipVerify", "timeout"}},
		{"secureJsonData", keys.SecureJSONData, []string{"agentToken", "basicAuthPassword", "httpHeaderValue1",
			"tlsCACert", "tlsClientCert", "tlsClientKey"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Subset(t, tt.list, tt.want)
			require.True(t, sort.StringsAreSorted(tt.list), "keys are sorted: %v", tt.list)
		})
	}
	t.Run("no repeats, no secret among the plain keys", func(t *testing.T) {
		seen := map[string]bool{}
		for _, k := range keys.JSONData {
			require.False(t, seen[k], "repeated key %s", k)
			seen[k] = true
		}
		for _, k := range keys.SecureJSONData {
			require.False(t, seen[k], "secure key %s is also a plain key", k)
		}
	})
}

// TestSettingKeysAreRead sets each of the plugin's own jsonData keys that
// SettingKeys names to an invalid value and requires ParseSettings to reject
// it naming that key: a listed key the backend does not read fails here,
// and so does a new key without a case below.
func TestSettingKeysAreRead(t *testing.T) {
	invalid := map[string]any{
		"scrapeInterval": "x", "queryTimeout": "x", "instanceLabel": "1x", "metricPrefix": "-",
		"maxConcurrentQueries": 0, "selector": "up + 1", "profile": "nope", "incrementalQueryOverlapWindow": "x", "stallWindow": "x",
		"incrementalQuerying": "x", "agentUrls": []string{"ftp://x"}, "agentTimeout": "x", "agentJob": 1, "agentSelector": "sum(up)",
		"saturationKvHigh": 2, "saturationQueue": -1, "saturationPreemptions": -1, "saturationIdle": 2,
		"roleLabel": "llm-d.ai/role", "recordingRules": "x", "rulePrefix": "-",
		"containerLabels": "docker", "containerMap": []map[string]string{{"instance": "h"}},
	}
	// prometheusUrl is only the fallback of the data source's url: checked below with an empty url.
	skip := map[string]bool{"prometheusUrl": true}
	for _, k := range httpJSONKeys {
		skip[k] = true
	}
	for _, key := range SettingKeys().JSONData {
		if skip[key] {
			continue
		}
		t.Run(key, func(t *testing.T) {
			bad, ok := invalid[key]
			require.True(t, ok, "no invalid value for %s: add one", key)
			raw, err := json.Marshal(map[string]any{key: bad})
			require.NoError(t, err)
			_, err = ParseSettings(Instance{URL: "http://prometheus:9090", JSONData: raw})
			require.ErrorContains(t, err, key)
		})
	}
	t.Run("prometheusUrl", func(t *testing.T) {
		_, err := ParseSettings(Instance{JSONData: []byte(`{"prometheusUrl":"ftp://x"}`)})
		require.ErrorContains(t, err, `url "ftp://x"`)
	})
}
