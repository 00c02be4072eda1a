package vllm

import (
	"errors"
	"fmt"
	"path"
	"regexp"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file derives the KServe variants of the shipped rule files
// (deploy/prometheus/rules/kserve/, deploy/kubernetes/kserve/) from the
// plain ones: cmd/kserverules writes them, pkg/deploytest fails when the
// committed files differ from what KServeRules gives.
//
// KServe's LLMInferenceService controller scrapes vLLM with a PodMonitor
// whose metric relabelling renames every series kserve_<name>
// (kserve_vllm:num_requests_running), so the plain rules' vllm: selectors
// match nothing there, and its job is not the plain rules' (.+/)?vllm. The
// variants read kserve_vllm: and select up by KServeEngineJobRegex. The
// names they record stay the plain ones (engine:vllm_*, instance:vllm_*,
// model:vllm_*): the data source's rule discovery (RuleNames under the
// rulePrefix engine:) and the rules that read recorded series find them
// unchanged, whatever the metric prefix.

// KServeEngineJobRegex matches the jobs of the PodMonitors that rename the
// series kserve_<name>: kserve-llm-isvc-vllm-engine in every namespace
// with an LLMInferenceService (kserve/kserve), and <service>-kserve-llmisvc-engine,
// one per service (OpenDataHub's controller). Their "-default" twins keep
// vLLM's own names and are left to the plain rules.
const KServeEngineJobRegex = `(.+/)?(kserve-llm-isvc-vllm-engine|.+-kserve-llmisvc-engine)`

// kserveTestJob is the job the variants' unit tests give the series the
// plain tests give the job vllm (in a namespace or not).
const kserveTestJob = "kserve-llm-isvc-vllm-engine"

// KServeRuleSources are the files that have a KServe variant: the rule
// files, their PrometheusRules, and the unit tests on the pod label shape
// KServe's series have (the plain-target tests of vllm.rules.yml are not
// KServe-shaped and are left out).
var KServeRuleSources = []string{
	"deploy/prometheus/rules/vllm.rules.yml",
	"deploy/prometheus/rules/vllm.rules.operator.test.yml",
	"deploy/prometheus/rules/vllm-recording.rules.yml",
	"deploy/prometheus/rules/vllm-recording.rules.test.yml",
	"deploy/prometheus/rules/vllm-slo.rules.yml",
	"deploy/prometheus/rules/vllm-slo.rules.test.yml",
	"deploy/prometheus/rules/vllm-capacity.rules.yml",
	"deploy/prometheus/rules/vllm-capacity.rules.test.yml",
	"deploy/kubernetes/vllm-prometheusrule.yaml",
	"deploy/kubernetes/vllm-recording-prometheusrule.yaml",
	"deploy/kubernetes/vllm-slo-prometheusrule.yaml",
	"deploy/kubernetes/vllm-capacity-prometheusrule.yaml",
}

// KServeTarget is where a source's KServe variant goes: a kserve folder
// beside it, under the same name, so the unit tests' rule_files and
// promtool's relative paths keep working.
func KServeTarget(source string) string {
	dir, file := path.Split(source)
	return dir + "kserve/" + file
}

var (
	// kserveMetricRe is a vLLM metric name's prefix: vllm: not inside
	// another name (ray_vllm: stays).
	kserveMetricRe = regexp.MustCompile(`(?m)(^|[^A-Za-z0-9_:])vllm:`)
	// kserveUpJobRe is the plain rules' job matcher on up.
	kserveUpJobRe = regexp.MustCompile(`job=~"\(\.\+/\)\?vllm"`)
	// kserveTestJobRe is a test series' job vllm, in a namespace or not.
	kserveTestJobRe = regexp.MustCompile(`job="([^"/]*/)?vllm"`)
	// kserveHeaderRe is the file's leading comment block, which describes
	// the plain file and is replaced.
	kserveHeaderRe = regexp.MustCompile(`\A(?:#[^\n]*\n|\n)*`)
	// kserveManifestKindRe marks a PrometheusRule manifest.
	kserveManifestKindRe = regexp.MustCompile(`(?m)^kind: PrometheusRule$`)
	// kserveManifestNameRe is a PrometheusRule's metadata.name: the variant
	// gets its own, so both can sit in one namespace.
	kserveManifestNameRe = regexp.MustCompile(`(?m)^  name: (\S+)$`)
)

// ErrKServeRules is returned when a source lacks what the rewrite expects.
var ErrKServeRules = errors.New("kserve rules")

// KServeRules returns the KServe variant of a rule file, PrometheusRule or
// promtool test file (source is its repository path, for the header and
// the kind of rewrite): vLLM's names under kserve_vllm:, up selected by
// KServe's engine jobs, a test series' job vllm made KServe's, and a
// PrometheusRule renamed <name>-kserve.
func KServeRules(source string, src []byte) ([]byte, error) {
	if !kserveMetricRe.Match(src) {
		return nil, fmt.Errorf("%w: %s has no vllm: name to rewrite", ErrKServeRules, source)
	}
	body := kserveHeaderRe.ReplaceAll(src, nil)
	body = kserveMetricRe.ReplaceAll(body, []byte("${1}"+models.KServePrefix+"vllm:"))
	body = kserveUpJobRe.ReplaceAll(body, []byte(`job=~"`+KServeEngineJobRegex+`"`))
	body = kserveTestJobRe.ReplaceAll(body, []byte(`job="${1}`+kserveTestJob+`"`))
	if kserveManifestKindRe.Match(body) {
		loc := kserveManifestNameRe.FindSubmatchIndex(body)
		if loc == nil {
			return nil, fmt.Errorf("%w: %s is a PrometheusRule without metadata.name", ErrKServeRules, source)
		}
		name := string(body[loc[2]:loc[3]])
		body = append(append(append([]byte{}, body[:loc[0]]...), "  name: "+name+"-kserve"...), body[loc[1]:]...)
	}
	return append([]byte(kserveHeader(source)), body...), nil
}

// kserveHeader is the generated file's opening comment.
func kserveHeader(source string) string {
	return "# GENERATED by `go run ./cmd/kserverules` from " + source + ": do not edit. Edit the source and\n" +
		"# run the generator; pkg/deploytest fails when this file differs from what the source gives.\n" +
		"#\n" +
		"# The KServe variant (LLMInferenceService): KServe's PodMonitor renames every series kserve_<name>, so\n" +
		"# every vllm: name of the source reads kserve_vllm: here, and the rules on up select\n" +
		"#   job=~\"" + KServeEngineJobRegex + "\"\n" +
		"# (kserve/kserve's monitor, or OpenDataHub's per-service ones; not their -default twins, whose series keep\n" +
		"# the plain names). Recorded names are the source's, so the data source finds them. Load this variant\n" +
		"# instead of the plain one for the same servers: both record the same names. The source's comments\n" +
		"# below describe the rules.\n\n"
}
