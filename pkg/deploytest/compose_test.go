package deploytest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

const composeFile = "docker-compose.yaml"

// composeService is the part of a compose service these tests read.
type composeService struct {
	Image       string               `yaml:"image"`
	Build       *composeBuild        `yaml:"build"`
	Entrypoint  stringList           `yaml:"entrypoint"`
	Command     stringList           `yaml:"command"`
	Environment envMap               `yaml:"environment"`
	Volumes     []string             `yaml:"volumes"`
	DependsOn   map[string]dependsOn `yaml:"depends_on"`
	NetworkMode string               `yaml:"network_mode"`
	VolumesFrom []string             `yaml:"volumes_from"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

type dependsOn struct {
	Condition string `yaml:"condition"`
}

type composeProject struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

// stringList reads a compose command or entrypoint: a list, or one string
// split on white space (compose's shell form without a shell).
type stringList []string

func (s *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = strings.Fields(n.Value)
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*s = l
	return nil
}

// envMap reads compose's environment in either form: a map or KEY=VALUE items.
type envMap map[string]string

func (e *envMap) UnmarshalYAML(n *yaml.Node) error {
	*e = envMap{}
	if n.Kind == yaml.SequenceNode {
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			(*e)[k] = v
		}
		return nil
	}
	m := map[string]string{}
	if err := n.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		(*e)[k] = v
	}
	return nil
}

// mount is one short-syntax volume entry: SOURCE:TARGET[:MODE].
type mount struct {
	Source, Target string
	Bind           bool // the source is a host path, not a named volume
}

func parseMount(t *testing.T, service, spec string) mount {
	t.Helper()
	parts := strings.Split(spec, ":")
	require.True(t, len(parts) == 2 || len(parts) == 3, "service %s: volume %q is not SOURCE:TARGET[:MODE]", service, spec)
	src := parts[0]
	return mount{Source: src, Target: parts[1], Bind: strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/")}
}

func loadCompose(t *testing.T) composeProject {
	t.Helper()
	var p composeProject
	readYAML(t, repoPath(t, composeFile), &p)
	require.NotEmpty(t, p.Services, "%s has no services", composeFile)
	return p
}

// service returns the named service or fails.
func (p composeProject) service(t *testing.T, name string) composeService {
	t.Helper()
	s, ok := p.Services[name]
	require.True(t, ok, "%s has no service %q", composeFile, name)
	return s
}

// mounts returns a service's volumes parsed.
func (s composeService) mounts(t *testing.T, name string) []mount {
	t.Helper()
	var ms []mount
	for _, v := range s.Volumes {
		ms = append(ms, parseMount(t, name, v))
	}
	return ms
}

// mountAt returns the mount whose target is target.
func (s composeService) mountAt(t *testing.T, name, target string) mount {
	t.Helper()
	for _, m := range s.mounts(t, name) {
		if m.Target == target {
			return m
		}
	}
	t.Fatalf("service %s mounts nothing at %s (volumes: %v)", name, target, s.Volumes)
	return mount{}
}

// flagValue returns the value of --name=value or "--name value" in args.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

func pluginID(t *testing.T) string {
	t.Helper()
	var pj struct {
		ID string `json:"id"`
	}
	b, err := os.ReadFile(repoPath(t, "plugin.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &pj))
	require.NotEmpty(t, pj.ID)
	return pj.ID
}

// TestComposeMountsAndBuildsExist: every host path the stack mounts, every
// build context and Dockerfile exists in the repository, and every named
// volume is declared.
func TestComposeMountsAndBuildsExist(t *testing.T) {
	p := loadCompose(t)
	for name, s := range p.Services {
		for _, m := range s.mounts(t, name) {
			if !m.Bind {
				_, declared := p.Volumes[m.Source]
				require.True(t, declared, "service %s mounts volume %q, which is not declared under volumes:", name, m.Source)
				continue
			}
			require.False(t, filepath.IsAbs(m.Source), "service %s mounts the absolute host path %s; use a path in the repository", name, m.Source)
			_, err := os.Stat(repoPath(t, m.Source))
			require.NoError(t, err, "service %s mounts %s, which does not exist in the repository", name, m.Source)
		}
		if s.Build != nil {
			_, err := os.Stat(repoPath(t, s.Build.Context))
			require.NoError(t, err, "service %s: build context", name)
			_, err = os.Stat(repoPath(t, path.Join(s.Build.Context, s.Build.Dockerfile)))
			require.NoError(t, err, "service %s: Dockerfile", name)
		}
		require.True(t, s.Image != "" || s.Build != nil, "service %s has neither image nor build", name)
	}
}

// TestComposeSimUsesFlagsFile: vllm-sim runs the entrypoint that reads the
// flags file, with deploy/vllm-sim.flags (the demo's) mounted where the
// entrypoint reads it, and writes its targets to a volume Prometheus reads
// at the path of the compose Prometheus config.
func TestComposeSimUsesFlagsFile(t *testing.T) {
	p := loadCompose(t)
	sim := p.service(t, "vllm-sim")
	require.NotNil(t, sim.Build, "vllm-sim must be built from the repository")
	require.Equal(t, "deploy/docker/tools.Dockerfile", sim.Build.Dockerfile)
	require.Equal(t, stringList{"vllm-sim-entrypoint"}, sim.Entrypoint)

	dockerfile, err := os.ReadFile(repoPath(t, "deploy/docker/tools.Dockerfile"))
	require.NoError(t, err)
	require.Contains(t, string(dockerfile), "COPY deploy/docker/vllm-sim-entrypoint.sh /usr/local/bin/vllm-sim-entrypoint",
		"the image must carry the entrypoint the service runs")

	flagsPath := sim.Environment["VLLM_SIM_FLAGS_FILE"]
	require.NotEmpty(t, flagsPath, "vllm-sim must set VLLM_SIM_FLAGS_FILE")
	require.Equal(t, "./deploy/vllm-sim.flags", sim.mountAt(t, "vllm-sim", flagsPath).Source,
		"vllm-sim must read deploy/vllm-sim.flags, the demo's flags")
	require.Equal(t, "0.0.0.0", sim.Environment["VLLM_SIM_LISTEN"], "other containers must reach the fleet")

	// The targets file lies on a named volume that Prometheus mounts too,
	// at the folder its compose config reads.
	targets := sim.Environment["VLLM_SIM_TARGETS_FILE"]
	require.NotEmpty(t, targets)
	simVol := sim.mountAt(t, "vllm-sim", path.Dir(targets))
	require.False(t, simVol.Bind, "the targets folder must be a named volume, not a folder of the repository")
	prom := p.service(t, "prometheus")
	found := false
	for _, m := range prom.mounts(t, "prometheus") {
		if m.Source == simVol.Source {
			found = true
			require.Equal(t, path.Dir(targets), m.Target, "prometheus must see the targets where vllm-sim writes them")
		}
	}
	require.True(t, found, "prometheus does not mount the targets volume %q", simVol.Source)
	var cfg promConfig
	readYAML(t, repoPath(t, "deploy/prometheus/prometheus.compose.yml"), &cfg)
	require.Equal(t, []string{targets}, cfg.job(t, "vllm").fileSDFiles(), "the compose Prometheus config must read vllm-sim's targets file")
}

// TestComposeNodeAgentFollowsFleet: the node agent simulates one GPU per
// simulated engine and follows every instance on the ports the entrypoint
// gives them, so the flags file cannot change without this test noticing.
func TestComposeNodeAgentFollowsFleet(t *testing.T) {
	p := loadCompose(t)
	_, flags := simFlags(t)
	instances, err := strconv.Atoi(flags["instances"])
	require.NoError(t, err, "deploy/vllm-sim.flags --instances")
	engines := 1
	if v, ok := flags["engines-per-instance"]; ok {
		engines, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	basePort, err := strconv.Atoi(p.service(t, "vllm-sim").Environment["VLLM_SIM_BASE_PORT"])
	require.NoError(t, err, "vllm-sim VLLM_SIM_BASE_PORT")

	agent := p.service(t, "node-agent")
	args := append(append(stringList{}, agent.Entrypoint...), agent.Command...)
	require.Equal(t, "vllm-node-agent", args[0])
	gpus, ok := flagValue(args, "simulate")
	require.True(t, ok, "node-agent must run with --simulate")
	require.Equal(t, strconv.Itoa(instances*engines), gpus, "one simulated GPU per engine of deploy/vllm-sim.flags")
	follow, ok := flagValue(args, "follow")
	require.True(t, ok, "node-agent must follow the fleet")
	var want []string
	for i := range instances {
		want = append(want, fmt.Sprintf("http://vllm-sim:%d/metrics", basePort+i))
	}
	require.Equal(t, want, strings.Split(follow, ","))
	listen, _ := flagValue(args, "listen")
	require.Equal(t, "0.0.0.0:9400", listen, "Prometheus scrapes node-agent:9400")
	require.Equal(t, "service_healthy", agent.DependsOn["vllm-sim"].Condition)
}

// TestComposePrometheus: Prometheus mounts deploy/prometheus (config and
// rules) and runs a config from it.
func TestComposePrometheus(t *testing.T) {
	p := loadCompose(t)
	prom := p.service(t, "prometheus")
	require.Equal(t, "prom/prometheus:v"+testedPrometheusVersion(t), prom.Image,
		"the stack runs the Prometheus the integration tests run (scripts/backends.sh PROMETHEUS_VERSION)")
	require.Equal(t, "./deploy/prometheus", prom.mountAt(t, "prometheus", "/etc/prometheus").Source)
	cfg, ok := flagValue(prom.Command, "config.file")
	require.True(t, ok, "prometheus must be given --config.file")
	rel, ok := strings.CutPrefix(cfg, "/etc/prometheus/")
	require.True(t, ok, "the config must come from the mounted deploy/prometheus, not %s", cfg)
	_, err := os.Stat(repoPath(t, "deploy/prometheus/"+rel))
	require.NoError(t, err, "prometheus runs %s", cfg)
}

// testedPrometheusVersion is the Prometheus 3 version scripts/backends.sh
// builds for the integration tests.
func testedPrometheusVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(repoPath(t, "scripts/backends.sh"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^PROMETHEUS_VERSION=(\d+\.\d+\.\d+)\s*$`).FindStringSubmatch(string(raw))
	require.NotNil(t, m, "scripts/backends.sh sets no PROMETHEUS_VERSION=X.Y.Z")
	return m[1]
}

// TestComposeGrafana: Grafana (12.1 or later) loads the plugin (unsigned, by id) from the
// volume the plugin-build service fills, and mounts provisioning/ and
// dashboards/.
func TestComposeGrafana(t *testing.T) {
	p := loadCompose(t)
	id := pluginID(t)
	g := p.service(t, "grafana")
	// Grafana 12.1 or later: the version the Helm values need (preinstall_sync).
	require.Regexp(t, `^grafana/grafana(-enterprise)?:(12\.([1-9]|\d\d+)|1[3-9]|[2-9]\d)\.`, g.Image)
	require.Contains(t, strings.Split(g.Environment["GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"], ","), id)
	require.Equal(t, "true", g.Environment["GF_AUTH_ANONYMOUS_ENABLED"])
	require.Equal(t, "Admin", g.Environment["GF_AUTH_ANONYMOUS_ORG_ROLE"])
	require.Equal(t, "./provisioning", g.mountAt(t, "grafana", "/etc/grafana/provisioning").Source)
	dashboards := false
	for _, m := range g.mounts(t, "grafana") {
		dashboards = dashboards || m.Source == "./dashboards"
	}
	require.True(t, dashboards, "grafana must mount ./dashboards")

	plugin := g.mountAt(t, "grafana", "/var/lib/grafana/plugins/"+id)
	require.False(t, plugin.Bind, "the plugin comes from the build service's volume, not from a local dist/")
	build := p.service(t, "plugin-build")
	require.NotNil(t, build.Build)
	require.Equal(t, "deploy/docker/plugin.Dockerfile", build.Build.Dockerfile)
	filled := false
	for _, m := range build.mounts(t, "plugin-build") {
		filled = filled || m.Source == plugin.Source
	}
	require.True(t, filled, "plugin-build does not write the volume %q that grafana loads", plugin.Source)
	require.Equal(t, "service_completed_successfully", g.DependsOn["plugin-build"].Condition,
		"grafana must start after the plugin is copied")

	dockerfile, err := os.ReadFile(repoPath(t, "deploy/docker/plugin.Dockerfile"))
	require.NoError(t, err)
	for _, want := range []string{"go run github.com/magefile/mage -v", "build:linux", "npm ci", "npm run build"} {
		require.Contains(t, string(dockerfile), want, "plugin.Dockerfile must build the plugin as scripts/test.sh does")
	}
}

// TestComposePrometheusConfigInStep: the compose Prometheus config has the
// tested config's global settings, rule files and jobs.
func TestComposePrometheusConfigInStep(t *testing.T) {
	var demo, compose promConfig
	readYAML(t, repoPath(t, "deploy/prometheus/prometheus.yml"), &demo)
	readYAML(t, repoPath(t, "deploy/prometheus/prometheus.compose.yml"), &compose)
	require.Equal(t, demo.Global, compose.Global)
	require.Equal(t, []string{"rules/*.rules.yml"}, demo.RuleFiles)
	require.Equal(t, demo.RuleFiles, compose.RuleFiles)
	require.Equal(t, demo.jobNames(), compose.jobNames())
	require.Equal(t, []string{"vllm", "vllm-node-agent", "node"}, demo.jobNames())
	require.Equal(t, []string{"targets/vllm.json"}, demo.job(t, "vllm").fileSDFiles())
	require.Equal(t, []string{"targets/agents.json"}, demo.job(t, "vllm-node-agent").fileSDFiles())
	require.Equal(t, []string{"targets/node.json"}, demo.job(t, "node").fileSDFiles())
}

// promConfig is the part of a Prometheus config these tests compare.
type promConfig struct {
	Global        map[string]any `yaml:"global"`
	RuleFiles     []string       `yaml:"rule_files"`
	ScrapeConfigs []scrapeConfig `yaml:"scrape_configs"`
}

type scrapeConfig struct {
	JobName       string `yaml:"job_name"`
	FileSDConfigs []struct {
		Files []string `yaml:"files"`
	} `yaml:"file_sd_configs"`
	RelabelConfigs []struct {
		SourceLabels []string `yaml:"source_labels"`
		Regex        string   `yaml:"regex"`
		TargetLabel  string   `yaml:"target_label"`
		Replacement  string   `yaml:"replacement"`
	} `yaml:"relabel_configs"`
}

func (c promConfig) jobNames() []string {
	var names []string
	for _, s := range c.ScrapeConfigs {
		names = append(names, s.JobName)
	}
	return names
}

func (c promConfig) job(t *testing.T, name string) scrapeConfig {
	t.Helper()
	for _, s := range c.ScrapeConfigs {
		if s.JobName == name {
			return s
		}
	}
	t.Fatalf("no scrape job %q", name)
	return scrapeConfig{}
}

func (s scrapeConfig) fileSDFiles() []string {
	var files []string
	for _, f := range s.FileSDConfigs {
		files = append(files, f.Files...)
	}
	return files
}

// TestComposeSimAdvertisesServiceName: inside compose, vllm-sim listens on
// 0.0.0.0, so its targets file must carry the service name Prometheus
// reaches it by; the entrypoint passes VLLM_SIM_ADVERTISE_HOST on as
// --advertise-host, and the compose Prometheus needs no relabelling.
func TestComposeSimAdvertisesServiceName(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	require.Equal(t, "vllm-sim", p.service(t, "vllm-sim").Environment["VLLM_SIM_ADVERTISE_HOST"])
	cfg, err := os.ReadFile(repoPath(t, "deploy/prometheus/prometheus.compose.yml"))
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "relabel_configs")

	targets := filepath.Join(t.TempDir(), "vllm.json")
	startSimViaEntrypoint(t, targets, "VLLM_SIM_ADVERTISE_HOST=vllm-sim")
	var groups []struct {
		Targets []string `json:"targets"`
	}
	b, err := os.ReadFile(targets)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &groups), "targets file: %s", b)
	require.NotEmpty(t, groups)
	for _, tg := range groups[0].Targets {
		require.True(t, strings.HasPrefix(tg, "vllm-sim:"), "target %s", tg)
	}
}

// TestComposePrometheus3LoadsConfig: the Prometheus the stack runs (3.x,
// the version scripts/backends.sh builds for the tests) loads
// prometheus.compose.yml with every rule file and sets up each scrape job
// with the stack's static targets.
func TestComposePrometheus3LoadsConfig(t *testing.T) {
	t.Parallel()
	require.Equal(t, promtest.Prometheus3Version, testedPrometheusVersion(t))
	dir := promConfigDir(t)
	p := promServer{promtest.Start(t, promtest.Options{
		ConfigFile: filepath.Join(dir, "prometheus.compose.yml"), Backend: promtest.Prometheus3,
	})}

	var build struct {
		Version string `json:"version"`
	}
	p.get(t, "/api/v1/status/buildinfo", &build)
	require.Equal(t, promtest.Prometheus3Version, build.Version)

	var rules struct {
		Groups []struct {
			File string `json:"file"`
		} `json:"groups"`
	}
	p.get(t, "/api/v1/rules", &rules)
	loaded := map[string]bool{}
	for _, g := range rules.Groups {
		loaded[filepath.Base(g.File)] = true
	}
	files, err := filepath.Glob(repoPath(t, "deploy/prometheus/rules/*.rules.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		require.True(t, loaded[filepath.Base(f)], "Prometheus 3 did not load %s (loaded: %v)", filepath.Base(f), loaded)
	}

	require.Contains(t, p.waitForTargets(t, "vllm-node-agent", 1), "node-agent:9400")
	require.Contains(t, p.waitForTargets(t, "node", 1), "vllm-sim:9100")

	// Retention comes from the config file (the flag is deprecated in 3.x).
	var info struct {
		StorageRetention string `json:"storageRetention"`
	}
	p.get(t, "/api/v1/status/runtimeinfo", &info)
	require.Equal(t, "1w", info.StorageRetention, "the stack keeps a week (7d, as Prometheus prints it)")
}

// deprecatedFlag matches a flag in Prometheus' --help whose text marks it deprecated.
var deprecatedFlag = regexp.MustCompile(`(?m)^\s+--(?:\[no-\])?([a-z0-9.\-]+)(?:=\S+)?\s*\n?\s*\[DEPRECATED\]`)

// TestComposePrometheusFlagsCurrent: the stack runs Prometheus 3 with no
// flag that its own --help calls deprecated (3.x moved the retention flags
// into the config file), and --help is read from the very version compose runs.
func TestComposePrometheusFlagsCurrent(t *testing.T) {
	bin := promtest.BinaryFor(t, promtest.Prometheus3)
	out, err := exec.Command(bin, "--help").CombinedOutput()
	require.NoError(t, err, "%s --help", bin)
	deprecated := map[string]bool{}
	for _, m := range deprecatedFlag.FindAllStringSubmatch(string(out), -1) {
		deprecated[m[1]] = true
	}
	require.True(t, deprecated["storage.tsdb.retention.time"], "this Prometheus marks the retention flag deprecated (the parser reads its --help)")
	for _, arg := range loadCompose(t).service(t, "prometheus").Command {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		require.False(t, deprecated[name], "compose runs Prometheus with the deprecated --%s: use its config file", name)
	}
}

// composeOwnFleet is the doc step that swaps the simulated fleet for a real one.
const composeOwnFleet = "docs/backends.md"

// TestComposeOwnFleetStepHolds: following docs/backends.md's "with the
// compose stack" step (delete the services it names, drop what it says from
// depends_on) leaves no service that needs a deleted one. The step once
// deleted vllm-sim while the node exporter ran in its network namespace.
func TestComposeOwnFleetStepHolds(t *testing.T) {
	raw, err := os.ReadFile(repoPath(t, composeOwnFleet))
	require.NoError(t, err)
	doc := string(raw)
	i := strings.Index(doc, "**With the compose stack**")
	require.GreaterOrEqual(t, i, 0, "%s has the compose step", composeOwnFleet)
	step := doc[i:]
	step = step[:strings.Index(step, "\n- **")]
	deleted := composeStepDeletes(t, step)
	p := loadCompose(t)
	for name := range deleted {
		_, ok := p.Services[name]
		require.True(t, ok, "the step deletes %s, which compose does not have", name)
	}
	for name, svc := range p.Services {
		if deleted[name] {
			continue
		}
		for dep := range svc.DependsOn {
			if deleted[dep] {
				require.Contains(t, step, "remove `"+dep+"` from the `"+name+"` service's `depends_on`",
					"%s depends on the deleted %s: the step must say to remove it", name, dep)
			}
		}
		if from, ok := strings.CutPrefix(svc.NetworkMode, "service:"); ok {
			require.False(t, deleted[from], "%s runs in %s's network, which the step deletes", name, from)
		}
		for _, v := range svc.VolumesFrom {
			require.False(t, deleted[strings.Split(v, ":")[0]], "%s takes volumes from a deleted service", name)
		}
	}
}

// composeStepDeletes reads the services a step deletes: the backticked
// names in "delete the `a`, `b` and `c` services".
func composeStepDeletes(t *testing.T, step string) map[string]bool {
	t.Helper()
	m := regexp.MustCompile("delete the ((?:`[a-z0-9-]+`(?:, | and )?)+) services?").FindStringSubmatch(step)
	require.NotNil(t, m, "the step names the services to delete: %q", step)
	out := map[string]bool{}
	for _, n := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(m[1], -1) {
		out[n[1]] = true
	}
	return out
}
