package query_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSLOOnRules: the slo query reads its burn pairs (and its attainment
// and budget over a recorded window) from the slo group's per-engine
// rates when they answer exactly, says so and which, and keeps the rest
// raw; a bound the rules do not count, a grouping they sum away or a
// missing group leave it raw (the last with a notice).
func TestSLOOnRules(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ttft := func(extra string) string {
		return `{"queryType":"slo","family":"ttft","threshold":1,"target":0.99,"window":"28d","grouping":"model"` + extra + `}`
	}
	avail := `{"queryType":"slo","objective":"availability","target":0.999,"window":"1d","grouping":"instance"}`
	tests := []struct {
		name, settings, query string
		step                  time.Duration
		drop                  []string
		want, notWant         []string
		read, notice          string
	}{
		{"ttft over 28d: burn pairs on rules, attainment raw", `{}`, ttft(""), 30 * time.Second, nil,
			[]string{`sum by (model_name) (engine:vllm_time_to_first_token_seconds_slo_good:rate1h{bound="1"})`,
				"sum by (model_name) (engine:vllm_time_to_first_token_seconds_slo_total:rate3d)",
				"rate(vllm:time_to_first_token_seconds_count[28d])"},
			[]string{"rate(vllm:time_to_first_token_seconds_count[1h])"},
			"Read from them: burn_1h_5m, burn_6h_30m, burn_1d_2h, burn_3d_6h; every other slo signal from raw series.", ""},
		{"availability over 1d: every signal on rules", `{}`, avail, 30 * time.Second, nil,
			[]string{"sum by (instance) (engine:vllm_request_success_slo_errors:rate1d)", "sum by (instance) (engine:vllm_request_success_slo_total:rate5m)"},
			[]string{"rate(vllm:request_success_total"},
			"Read from them: attainment, error_budget_left, burn_1h_5m, burn_6h_30m, burn_1d_2h, burn_3d_6h;", ""},
		{"another bound stays raw", `{}`, strings.Replace(ttft(""), `"threshold":1`, `"threshold":0.5`, 1), 30 * time.Second, nil,
			[]string{"rate(vllm:time_to_first_token_seconds_count[1h])"}, []string{"engine:"}, "", ""},
		{"a 15s step is not a multiple of 30s", `{}`, ttft(""), 15 * time.Second, nil,
			[]string{"rate(vllm:time_to_first_token_seconds_count[1h])"}, []string{"engine:"}, "", ""},
		{"off", `{"recordingRules":"off"}`, avail, 30 * time.Second, nil,
			[]string{"rate(vllm:request_success_total"}, []string{"engine:"}, "", ""},
		{"the slo group missing: raw, and said", `{}`, avail, 30 * time.Second, []string{"_slo_"},
			[]string{"rate(vllm:request_success_total"}, []string{"engine:"}, "",
			"The slo signals read raw series: the recording rule group vllm.recording.slo is missing or partly loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := &ruleProm{since: now.Add(-30 * 24 * time.Hour), drop: tt.drop}
			r := runOnRuleProm(t, fp, tt.settings, tt.query, tt.step, now)
			require.NoError(t, r.Error)
			for _, w := range tt.want {
				require.Contains(t, fp.exprs(), w)
			}
			for _, w := range tt.notWant {
				require.NotContains(t, fp.exprs(), w)
			}
			notes := noticeTexts(r.Frames)
			onRules := strings.Contains(fp.exprs(), "engine:")
			require.Equal(t, onRules, strings.Contains(notes, "Answered from recording rules (engine:…, every 30s)"), notes)
			if tt.read != "" {
				require.Contains(t, notes, tt.read)
			}
			if tt.notice != "" {
				require.Contains(t, notes, tt.notice)
			}
		})
	}
}
