package vllm

import (
	"encoding/csv"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionsMatchReference: the release each wire name first appeared in,
// per the reference table, is what the signal's Versions text says.
func TestVersionsMatchReference(t *testing.T) {
	f, err := os.Open("testdata/reference/vllm-metrics.tsv")
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	firstSeen := map[string][]string{}
	release := regexp.MustCompile(`v(\d+\.\d+(?:\.\d+)?)`)
	for _, row := range rows[1:] {
		base := strings.TrimPrefix(strings.TrimSuffix(row[1], "_{bucket,sum,count}"), "vllm:")
		for _, col := range []string{row[7], row[8]} {
			if m := release.FindAllStringSubmatch(col, -1); len(m) > 0 {
				firstSeen[base] = append(firstSeen[base], m[len(m)-1][1])
			}
		}
	}
	for _, s := range Signals() {
		if s.Versions == "" {
			continue
		}
		t.Run(string(s.Key), func(t *testing.T) {
			for _, name := range []string{s.V1, s.V0} {
				if name == "" {
					continue
				}
				require.Contains(t, s.Versions, "vllm:"+name)
				require.NotEmpty(t, firstSeen[name], name)
				for _, v := range firstSeen[name] {
					require.Contains(t, s.Versions, v, "%s first appeared in %s", name, v)
				}
			}
		})
	}
	for _, k := range []SignalKey{Running, Waiting, KVUsage, Preemptions, QueueTime, TTFT, ITL, E2E, PrefillTime, DecodeTime, InferenceTime} {
		s, _ := Lookup(k)
		require.NotEmpty(t, s.Versions, "%s is needed by a query type", k)
	}
}

func TestFallback(t *testing.T) {
	old := Detect([]string{"vllm:time_per_output_token_seconds_bucket", "vllm:gpu_cache_usage_perc", "vllm:num_requests_running"}, "vllm:")
	txt, ok := old.Fallback(ITL, "vllm:")
	require.True(t, ok)
	require.Contains(t, txt, "Read vllm:time_per_output_token_seconds")
	_, ok = old.Fallback(KVUsage, "vllm:")
	require.True(t, ok)
	both := Detect([]string{"vllm:time_per_output_token_seconds_bucket", "vllm:inter_token_latency_seconds_bucket"}, "vllm:")
	_, ok = both.Fallback(ITL, "vllm:")
	require.False(t, ok, "the new name is read where it exists")
	_, ok = old.Fallback(Preemptions, "vllm:")
	require.False(t, ok, "one name in both generations has no fallback")
	require.Contains(t, MissingText(Preemptions, "ray_vllm:", "x"), "ray_vllm:num_preemptions_total")
}
