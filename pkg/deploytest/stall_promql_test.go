package deploytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// stallSeries are the input series of the stall test, 15 s apart over
// 10 minutes, one instance per case: wedged (its counters stop after the
// sample at 60 s), slow (its counters move once every 2 minutes), asleep
// (holds requests, sleep mode), idle, down (scrape fails) and gap (its
// batch empties once, at 210 s, and nothing ever moves).
var stallSeries = map[string]map[string]string{
	"wedged": {"running": "4x40", "waiting": "2x40", "counter": "0+10x4 40x35", "asleep": "0x40", "up": "1x40"},
	"slow":   {"running": "4x40", "waiting": "2x40", "counter": "0x7 1x7 2x7 3x7 4x7", "asleep": "0x40", "up": "1x40"},
	"asleep": {"running": "1x40", "waiting": "3x40", "counter": "5x40", "asleep": "1x40", "up": "1x40"},
	"idle":   {"running": "0x40", "waiting": "0x40", "counter": "5x40", "asleep": "0x40", "up": "1x40"},
	"down":   {"running": "4x40", "waiting": "2x40", "counter": "5x40", "asleep": "0x40", "up": "0x40"},
	"gap":    {"running": "4x13 0 4x25", "waiting": "0x40", "counter": "5x40", "asleep": "0x40", "up": "1x40"},
	// young is first scraped at 6m, busy, its counters flat for want of
	// history: the alert's condition holds at 8m (its `for:` waits it
	// out); the fleet table, saturation and health (StalledSeen) never
	// call it stalled.
	"young": {"running": "_x24 4x16", "waiting": "_x24 0x16", "counter": "_x24 5x16", "asleep": "_x24 0x16", "up": "_x24 1x16"},
}

// TestStalledAgreesWithTheAlert evaluates the plugin's stall expression
// and the VLLMEngineStalled alert's expression with promtool on the same
// series, at both sides of the 3-minute window: a second before the
// window has passed since the wedged engine's last counter change nothing
// is stalled, a second after it the wedged engine is, and later also the
// engine whose batch emptied once. The slow, sleeping, idle and down
// engines never are. The guarded expression the fleet table, saturation
// and health use (StalledSeen) agrees too, except on the engine first
// scraped within the window, which only the unguarded two return.
func TestStalledAgreesWithTheAlert(t *testing.T) {
	b := vllm.Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	plugin := b.Stalled(b.EngineLabels(), models.Filters{}, 3*time.Minute)
	seen := b.StalledSeen(b.EngineLabels(), models.Filters{}, 3*time.Minute)
	alert := stalledAlertExpr(t)
	labels := func(inst string, engine bool) string {
		if engine {
			return fmt.Sprintf(`{instance="%s", engine="0", model_name="m"}`, inst)
		}
		return fmt.Sprintf(`{instance="%s", model_name="m"}`, inst)
	}
	type want struct {
		inst  string
		value float64
	}
	evals := []struct {
		at    string
		want  []want
		young bool // the unguarded expressions also return young
	}{
		{"3m44s", nil, false},
		{"3m46s", []want{{"wedged", 6}}, false},
		{"8m", []want{{"wedged", 6}, {"gap", 4}}, true},
	}
	var sb strings.Builder
	sb.WriteString("rule_files: [empty.yml]\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n")
	for inst, s := range stallSeries {
		l := fmt.Sprintf(`instance="%s", job="vllm", engine="0", model_name="m"`, inst)
		for _, c := range []struct{ name, values string }{
			{"vllm:num_requests_running{" + l + "}", s["running"]},
			{"vllm:num_requests_waiting{" + l + "}", s["waiting"]},
			{"vllm:generation_tokens_total{" + l + "}", s["counter"]},
			{"vllm:prompt_tokens_total{" + l + "}", s["counter"]},
			{`vllm:request_success_total{finished_reason="stop", ` + l + "}", s["counter"]},
			{`vllm:engine_sleep_state{sleep_state="weights_offloaded", ` + l + "}", s["asleep"]},
			{fmt.Sprintf(`up{instance="%s", job="vllm"}`, inst), s["up"]},
		} {
			fmt.Fprintf(&sb, "      - series: '%s'\n        values: '%s'\n", c.name, c.values)
		}
	}
	sb.WriteString("    promql_expr_test:\n")
	for _, ev := range evals {
		for _, e := range []struct {
			expr    string
			engine  bool
			guarded bool
		}{{plugin, true, false}, {seen, true, true}, {alert, false, false}} {
			fmt.Fprintf(&sb, "      - expr: %q\n        eval_time: %s\n        exp_samples:", e.expr, ev.at)
			samples := ev.want
			if ev.young && !e.guarded {
				samples = append(append([]want{}, samples...), want{"young", 4})
			}
			if len(samples) == 0 {
				sb.WriteString(" []\n")
				continue
			}
			sb.WriteString("\n")
			for _, w := range samples {
				fmt.Fprintf(&sb, "          - labels: '%s'\n            value: %g\n", labels(w.inst, e.engine), w.value)
			}
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.yml"), []byte("groups: []\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stall_test.yml"), []byte(sb.String()), 0o600))
	out, ok := runTool(t, dir, promtool(t), "test", "rules", "stall_test.yml")
	require.True(t, ok, "promtool test rules failed:\n%s\ntest file:\n%s", out, sb.String())
}

// stalledAlertExpr reads the VLLMEngineStalled alert's expression from
// the shipped rule file.
func stalledAlertExpr(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, "deploy/prometheus/rules/vllm.rules.yml"))
	require.NoError(t, err)
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &f))
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "VLLMEngineStalled" {
				return strings.Join(strings.Fields(r.Expr), " ")
			}
		}
	}
	t.Fatal("VLLMEngineStalled is not in deploy/prometheus/rules/vllm.rules.yml")
	return ""
}
