package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// kserveHandTests is the KServe unit test written by hand (KServe's
// labels, both of OpenDataHub's monitors): the one file in the kserve
// folders the generator does not write.
const kserveHandTests = "deploy/prometheus/rules/kserve/kserve.rules.test.yml"

// TestKServeRulesGenerated: every committed KServe variant is exactly what
// cmd/kserverules writes from its source today, and the kserve folders
// hold nothing else, so a source changed without rerunning the generator
// (or a variant edited by hand) fails here.
func TestKServeRulesGenerated(t *testing.T) {
	want := map[string]bool{repoPath(t, kserveHandTests): true}
	for _, src := range vllm.KServeRuleSources {
		target := vllm.KServeTarget(src)
		want[repoPath(t, target)] = true
		t.Run(target, func(t *testing.T) {
			raw, err := os.ReadFile(repoPath(t, src))
			require.NoError(t, err)
			gen, err := vllm.KServeRules(src, raw)
			require.NoError(t, err)
			committed, err := os.ReadFile(repoPath(t, target))
			require.NoError(t, err, "run `go run ./cmd/kserverules`")
			require.Equal(t, string(gen), string(committed), "%s differs from what %s gives: run `go run ./cmd/kserverules`", target, src)
			last := strings.LastIndex(string(raw), "vllm:") // past the header, which the variant replaces
			drifted, err := vllm.KServeRules(src, []byte(string(raw[:last])+"vllm:drifted_"+string(raw[last+len("vllm:"):])))
			require.NoError(t, err)
			require.False(t, string(drifted) == string(committed), "the comparison must see a changed source")
		})
	}
	for _, dir := range []string{"deploy/prometheus/rules/kserve", "deploy/kubernetes/kserve"} {
		files, err := filepath.Glob(repoPath(t, dir+"/*"))
		require.NoError(t, err)
		for _, f := range files {
			require.True(t, want[f], "%s is not generated from a source (add it to vllm.KServeRuleSources) nor the hand-written test", f)
		}
	}
}

// ruleExprs returns every rule's name (record or alert) and expression of
// a rule file's groups.
func ruleExprs(t *testing.T, path string) (names, exprs []string) {
	t.Helper()
	var rf struct {
		Groups []struct {
			Rules []struct {
				Record string `yaml:"record"`
				Alert  string `yaml:"alert"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, path, &rf)
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Record+r.Alert)
			exprs = append(exprs, r.Expr)
		}
	}
	return names, exprs
}

// recordedLevel is a recorded name's level (instance:, engine:, model:).
var recordedLevel = regexp.MustCompile(`^(instance|engine|model):vllm_`)

// TestKServeRulesReadOnlyKServeNames parses every expression of the KServe
// rule files: each series it selects is a kserve_vllm: name, a name the
// rules record, or up on KServe's engine jobs (the stall state: up of the
// engine's server, any job); never a plain vllm: name.
// The recorded names are the plain files' (in order), so the data source's
// rule discovery (vllm.RuleNames under engine:) finds every one.
func TestKServeRulesReadOnlyKServeNames(t *testing.T) {
	var recorded []string
	for _, src := range vllm.KServeRuleSources {
		if !strings.HasSuffix(src, ".rules.yml") {
			continue
		}
		t.Run(filepath.Base(src), func(t *testing.T) {
			plainNames, _ := ruleExprs(t, repoPath(t, src))
			names, exprs := ruleExprs(t, repoPath(t, vllm.KServeTarget(src)))
			require.Equal(t, plainNames, names, "the variant records and alerts under the plain names")
			recorded = append(recorded, names...)
			for i, e := range exprs {
				expr, err := parser.NewParser(parser.Options{}).ParseExpr(e)
				require.NoError(t, err, names[i])
				parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
					if vs, ok := node.(*parser.VectorSelector); ok {
						checkKServeSelector(t, names[i], vs)
					}
					return nil
				})
			}
		})
	}
	for _, n := range vllm.RuleNames(models.DefaultRulePrefix) {
		require.Contains(t, recorded, n, "the plugin's recorded name %s", n)
	}
}

// checkKServeSelector fails on a selector the KServe variant must not have.
func checkKServeSelector(t *testing.T, rule string, vs *parser.VectorSelector) {
	t.Helper()
	switch {
	case vs.Name == "up" && strings.HasPrefix(rule, "engine:vllm_stalled:"):
		// The stall state takes every up series of the engine's server, of
		// any job, as the fleet table's raw stall column does (up in the
		// data source's scope): a KServe pod's -default twin included.
		for _, m := range vs.LabelMatchers {
			require.Contains(t, []string{"__name__", "pod"}, m.Name, "%s: up selects the server by pod only", rule)
		}
	case vs.Name == "up":
		i := slices.IndexFunc(vs.LabelMatchers, func(m *labels.Matcher) bool { return m.Name == "job" })
		require.GreaterOrEqual(t, i, 0, "%s: up without a job matcher", rule)
		require.Equal(t, vllm.KServeEngineJobRegex, vs.LabelMatchers[i].Value, "%s: up's job", rule)
	case strings.HasPrefix(vs.Name, models.KServePrefix+models.DefaultMetricPrefix), recordedLevel.MatchString(vs.Name):
	default:
		t.Errorf("%s selects %s: neither a kserve_vllm: name nor a recorded one", rule, vs.String())
	}
}

// TestKServeJobRegex: the variants' job regex matches the jobs of the
// monitors that rename series kserve_ and no other: not their -default
// twins (plain names), the scheduler's, the plain vLLM jobs or the agents'.
func TestKServeJobRegex(t *testing.T) {
	re := regexp.MustCompile("^(?:" + vllm.KServeEngineJobRegex + ")$") // PromQL anchors label regexes
	for job, want := range map[string]bool{
		"llm/kserve-llm-isvc-vllm-engine":         true, // kserve/kserve, one monitor per namespace
		"llm/qwen-kserve-llmisvc-engine":          true, // OpenDataHub, one per service
		"kserve-llm-isvc-vllm-engine":             true, // a jobLabel job
		"llm/kserve-llm-isvc-vllm-engine-default": false,
		"llm/qwen-kserve-llmisvc-engine-default":  false,
		"llm/kserve-llm-isvc-scheduler":           false,
		"inference/vllm":                          false,
		"vllm":                                    false,
		"monitoring/vllm-node-agent":              false,
	} {
		require.Equal(t, want, re.MatchString(job), job)
	}
}

// TestKServePromtool: promtool accepts the KServe rule files and the
// groups of their PrometheusRules, and their unit tests pass (the plain
// tests rewritten, and the hand-written one on KServe's labels); the same
// tests fail against the plain rules, so they do read KServe's names.
func TestKServePromtool(t *testing.T) {
	bin := promtool(t)
	var tests []string
	for _, src := range vllm.KServeRuleSources {
		target := vllm.KServeTarget(src)
		switch {
		case strings.HasSuffix(src, ".rules.yml"):
			out, ok := runTool(t, repoRoot(t), bin, "check", "rules", target)
			require.True(t, ok, "promtool check rules %s:\n%s", target, out)
		case strings.HasSuffix(src, ".test.yml"):
			tests = append(tests, target)
		default:
			checkManifestGroups(t, bin, target)
		}
	}
	tests = append(tests, kserveHandTests)
	for _, f := range tests {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, ok := runTool(t, repoRoot(t), bin, "test", "rules", f)
			require.True(t, ok, "promtool test rules %s:\n%s", f, out)
			require.Contains(t, out, "SUCCESS", out)

			// The same test beside the plain rule files.
			dir := t.TempDir()
			copyTree(t, repoPath(t, "deploy/prometheus/rules"), dir)
			writeFile(t, filepath.Join(dir, filepath.Base(f)), readString(t, repoPath(t, f)))
			out, ok = runTool(t, dir, bin, "test", "rules", filepath.Base(f))
			require.False(t, ok, "%s passes against the plain rules: its series are not KServe's", f)
			require.Contains(t, out, "FAILED", out)
		})
	}
}

// TestKServePrometheusRulesMatchRuleFiles: each KServe PrometheusRule
// carries exactly the groups of its KServe rule file, as the plain ones
// do, under its own name (so both can sit in one namespace).
func TestKServePrometheusRulesMatchRuleFiles(t *testing.T) {
	for ruleFile, manifest := range ruleManifests {
		t.Run(manifest, func(t *testing.T) {
			rules, err := os.ReadFile(repoPath(t, vllm.KServeTarget(ruleFile)))
			require.NoError(t, err)
			raw, err := os.ReadFile(repoPath(t, vllm.KServeTarget("deploy/kubernetes/"+manifest)))
			require.NoError(t, err)
			require.Equal(t, yamlGroups(t, rules, "groups"), yamlGroups(t, raw, "spec", "groups"))
			var meta struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal(raw, &meta))
			require.Equal(t, readManifests(t).rules[manifest].Name+"-kserve", meta.Metadata.Name)
		})
	}
}

// checkManifestGroups runs promtool check rules on a PrometheusRule's groups.
func checkManifestGroups(t *testing.T, bin, manifest string) {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, manifest))
	require.NoError(t, err)
	out, err := yaml.Marshal(map[string]any{"groups": yamlGroups(t, raw, "spec", "groups")})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "groups.yml")
	writeFile(t, path, string(out))
	res, ok := runTool(t, filepath.Dir(path), bin, "check", "rules", path)
	require.True(t, ok, "promtool check rules on %s's groups:\n%s", manifest, res)
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
