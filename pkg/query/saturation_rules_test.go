package query_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSaturationOnRules: the saturation query reads its preemption and
// completion rates from the recorded rates when they answer its question
// exactly (or closely, under nearest), says so and which, and keeps every
// other signal raw; otherwise every signal is raw, without the notice.
func TestSaturationOnRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	sat := func(grouping string) string {
		return `{"queryType":"saturation","grouping":"` + grouping + `","format":"series"}`
	}
	rawStays := []string{"sum by (instance) (avg_over_time(vllm:num_requests_waiting[60s]))",
		"max by (instance) (max_over_time(", "delta(vllm:num_requests_running[60s])", "rate(vllm:prefix_cache_hits_total"}
	tests := []struct {
		name, settings, query string
		step, rulesSince      time.Duration
		want, notWant         []string
	}{
		{"exact: preemptions and completions on rules, the rest raw", `{}`, sat("instance"), 30 * time.Second, 2 * time.Hour,
			append([]string{"sum by (instance) (engine:vllm_num_preemptions:rate1m)", "sum by (instance) (engine:vllm_request_success:rate1m)",
				"sum by (instance) (engine:vllm_num_requests_running:min_over_time3m)", "sum by (instance) (engine:vllm_prompt_tokens:increase3m) > 0",
				"max_over_time(vllm:engine_sleep_state{sleep_state!=\"awake\"}[180s])"}, rawStays...),
			[]string{"rate(vllm:num_preemptions_total", "sum by (instance) (rate(vllm:request_success_total", "min_over_time(vllm:", "increase(vllm:"}},
		{"exact, a stall window the rules do not record: the stall signal raw", `{"stallWindow":"4m"}`, sat("instance"), 30 * time.Second, 2 * time.Hour,
			[]string{"sum by (instance) (engine:vllm_num_preemptions:rate1m)", "min_over_time(vllm:num_requests_running[240s])"},
			[]string{":min_over_time", ":increase"}},
		{"exact: per engine", `{}`, sat("instance_engine"), time.Minute / 2, 2 * time.Hour,
			[]string{"sum by (instance, engine) (engine:vllm_num_preemptions:rate1m)", "sum by (instance, engine) (engine:vllm_request_success:rate1m)"},
			[]string{"rate(vllm:num_preemptions_total"}},
		{"exact: a 15s step is not a multiple of 30s", `{}`, sat("instance"), 15 * time.Second, 2 * time.Hour,
			[]string{"rate(vllm:num_preemptions_total[60s])", "rate(vllm:request_success_total[60s])"}, []string{"engine:"}},
		{"exact: a 75s window stays raw", `{}`, sat("instance"), time.Minute, 2 * time.Hour,
			[]string{"rate(vllm:num_preemptions_total[75s])"}, []string{"engine:"}},
		{"nearest: a 75s window reads 1m", `{"recordingRules":"nearest"}`, sat("instance"), time.Minute, 2 * time.Hour,
			[]string{"sum by (instance) (engine:vllm_num_preemptions:rate1m)", "avg_over_time(vllm:num_requests_waiting[75s])"},
			[]string{"rate(vllm:num_preemptions_total"}},
		{"by role, a label the rules sum away", `{"roleLabel":"role"}`, sat("role"), 30 * time.Second, 2 * time.Hour,
			[]string{"rate(vllm:num_preemptions_total"}, []string{"engine:"}},
		{"a selector on a label the rules sum away", `{"selector":"job=\"vllm\""}`, sat("instance"), 30 * time.Second, 2 * time.Hour,
			[]string{"rate(vllm:num_preemptions_total"}, []string{"engine:"}},
		{"off", `{"recordingRules":"off"}`, sat("instance"), 30 * time.Second, 2 * time.Hour,
			[]string{"rate(vllm:num_preemptions_total"}, []string{"engine:"}},
		{"rules younger than the range, no start found", `{}`, sat("instance"), 30 * time.Second, 30 * time.Minute,
			[]string{"rate(vllm:num_preemptions_total"}, []string{"engine:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-tt.rulesSince)}
			r := runOnRuleProm(t, fp, tt.settings, tt.query, tt.step, now)
			require.NoError(t, r.Error)
			for _, w := range tt.want {
				require.Contains(t, fp.exprs(), w)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, fp.exprs(), w)
			}
			onRules := strings.Contains(fp.exprs(), "engine:vllm_num_preemptions")
			notes := noticeTexts(r.Frames)
			require.Equal(t, onRules, strings.Contains(notes, "Answered from recording rules (engine:…, every 30s)"), notes)
			read := "Read from them: completions, preemptions, stalled; every other saturation signal from raw series."
			if strings.Contains(tt.settings, "stallWindow") {
				read = "Read from them: completions, preemptions; every other saturation signal from raw series."
			}
			require.Equal(t, onRules, strings.Contains(notes, read), notes)
			require.Equal(t, onRules && strings.Contains(tt.settings, "nearest"), strings.Contains(notes, "close rather than exact"), notes)
		})
	}
}
