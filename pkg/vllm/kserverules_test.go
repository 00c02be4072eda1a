package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKServeRules(t *testing.T) {
	const rules = "# plain header\n# more\n\ngroups:\n  - name: g\n"
	tests := []struct {
		name, source, in string
		want             string // the body after the generated header
		err              bool
	}{
		{name: "names and up's job", source: "deploy/prometheus/rules/x.rules.yml",
			in:   rules + "    expr: sum(vllm:num_requests_waiting) and up{job=~\"(.+/)?vllm\"}\n",
			want: "groups:\n  - name: g\n    expr: sum(kserve_vllm:num_requests_waiting) and up{job=~\"" + KServeEngineJobRegex + "\"}\n"},
		{name: "a name at a line's start, in a template, ray_vllm: and recorded names kept", source: "x.rules.yml",
			in:   "vllm:a\n  printf \"last_over_time(vllm:b{%s}[1h])\" ray_vllm:c engine:vllm_d:sum instance:vllm_e\n",
			want: "kserve_vllm:a\n  printf \"last_over_time(kserve_vllm:b{%s}[1h])\" ray_vllm:c engine:vllm_d:sum instance:vllm_e\n"},
		{name: "a test series' job, in a namespace or not; other jobs kept", source: "x.test.yml",
			in:   "- series: 'vllm:x{job=\"inference/vllm\"}'\n- series: 'up{job=\"vllm\"}'\n- series: 'up{job=\"monitoring/vllm-node-agent\"}'\n",
			want: "- series: 'kserve_vllm:x{job=\"inference/kserve-llm-isvc-vllm-engine\"}'\n- series: 'up{job=\"kserve-llm-isvc-vllm-engine\"}'\n- series: 'up{job=\"monitoring/vllm-node-agent\"}'\n"},
		{name: "a PrometheusRule gets its own name, groups keep theirs", source: "deploy/kubernetes/x.yaml",
			in:   "# header\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: vllm\nspec:\n  groups:\n    - name: vllm.alerts\n      expr: vllm:x\n",
			want: "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: vllm-kserve\nspec:\n  groups:\n    - name: vllm.alerts\n      expr: kserve_vllm:x\n"},
		{name: "nothing to rewrite", source: "x.rules.yml", in: "groups: []\n", err: true},
		{name: "a PrometheusRule without a name", source: "x.yaml", in: "\nkind: PrometheusRule\nspec: vllm:x\n", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KServeRules(tt.source, []byte(tt.in))
			if tt.err {
				require.ErrorIs(t, err, ErrKServeRules)
				return
			}
			require.NoError(t, err)
			header := kserveHeader(tt.source)
			require.Contains(t, header, tt.source, "the header names the source")
			require.Equal(t, header+tt.want, string(got))
		})
	}
}

func TestKServeTarget(t *testing.T) {
	require.Equal(t, "deploy/prometheus/rules/kserve/vllm.rules.yml", KServeTarget("deploy/prometheus/rules/vllm.rules.yml"))
	require.Equal(t, "deploy/kubernetes/kserve/vllm-prometheusrule.yaml", KServeTarget("deploy/kubernetes/vllm-prometheusrule.yaml"))
}
