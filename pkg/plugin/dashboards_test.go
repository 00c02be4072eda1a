package plugin_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/inferops/vllm-datasource/pkg/internal/grafanahost"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/plugin"
)

// dashboard is the part of a dashboard JSON the checks read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string          `json:"name"`
			Enable     bool            `json:"enable"`
			Datasource dsRef           `json:"datasource"`
			Target     json.RawMessage `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
	Panels []panel `json:"panels"`
}

// panel is one dashboard panel; a collapsed row holds its own panels.
type panel struct {
	ID          int               `json:"id"`
	Title       string            `json:"title"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Collapsed   bool              `json:"collapsed"`
	GridPos     gridPos           `json:"gridPos"`
	Datasource  dsRef             `json:"datasource"`
	Targets     []json.RawMessage `json:"targets"`
	Options     json.RawMessage   `json:"options"`
	FieldConfig struct {
		Overrides []override `json:"overrides"`
	} `json:"fieldConfig"`
	Panels []panel `json:"panels"`
}

// override is a panel's field override; the tests read those that hide
// series by name.
type override struct {
	Matcher struct {
		ID      string `json:"id"`
		Options any    `json:"options"`
	} `json:"matcher"`
	Properties []struct {
		ID    string          `json:"id"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
}

// hidden returns the regular expressions of the panel's byRegexp
// overrides that hide series from the graph (Grafana writes them /re/).
func (p panel) hidden(t *testing.T) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, o := range p.FieldConfig.Overrides {
		for _, prop := range o.Properties {
			var h struct{ Viz bool }
			if prop.ID != "custom.hideFrom" || json.Unmarshal(prop.Value, &h) != nil || !h.Viz {
				continue
			}
			re, ok := o.Matcher.Options.(string)
			require.True(t, o.Matcher.ID == "byRegexp" && ok, "%s: hides series by %s", p.Title, o.Matcher.ID)
			out = append(out, regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(re, "/"), "/")))
		}
	}
	return out
}

// visible drops the value fields the panel hides, by display name.
func (p panel) visible(t *testing.T, frames data.Frames) data.Frames {
	res := p.hidden(t)
	if len(res) == 0 {
		return frames
	}
	var out data.Frames
	for _, f := range frames {
		keep := f.EmptyCopy()
		keep.Fields = nil
		for _, fld := range f.Fields {
			name := fld.Name
			if fld.Config != nil && fld.Config.DisplayNameFromDS != "" {
				name = fld.Config.DisplayNameFromDS
			}
			if !slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(name) }) {
				keep.Fields = append(keep.Fields, fld)
			}
		}
		out = append(out, keep)
	}
	return out
}

type gridPos struct{ X, Y, W, H int }

// queryPanels returns every panel but the rows, those inside collapsed
// rows included: the panels that send queries.
func (d dashboard) queryPanels() []panel {
	var out []panel
	for _, p := range d.Panels {
		if p.Type == "row" {
			out = append(out, p.Panels...)
			continue
		}
		out = append(out, p)
	}
	return out
}

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func root(t *testing.T, parts ...string) string {
	return filepath.Join(append([]string{grafanahost.RepoRoot(t)}, parts...)...)
}

func loadDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	var pj struct {
		Includes []struct{ Type, Path string } `json:"includes"`
	}
	raw, err := os.ReadFile(root(t, "plugin.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &pj))
	files, err := filepath.Glob(root(t, "dashboards", "*.json"))
	require.NoError(t, err)
	require.Len(t, pj.Includes, len(files), "plugin.json includes every dashboard")
	out := map[string]dashboard{}
	for _, inc := range pj.Includes {
		require.Equal(t, "dashboard", inc.Type)
		raw, err := os.ReadFile(root(t, inc.Path))
		require.NoError(t, err, "plugin.json include %s", inc.Path)
		var d dashboard
		require.NoError(t, json.Unmarshal(raw, &d), inc.Path)
		out[inc.Path] = d
	}
	return out
}

// exampleValues stand for what the dashboard variables hold.
var exampleValues = map[string][]string{"model": {"meta-llama/Llama-3.1-8B-Instruct"}, "instance": {"10.0.0.1:8000"},
	"cluster": {"prod"}, "namespace": {"inference"}}

var varRef = regexp.MustCompile(`\$\{?([a-zA-Z_]\w*)`)

// TestDashboardReferences checks data-source types and uids, variables and
// that every target is a valid plugin query, without a fleet.
func TestDashboardReferences(t *testing.T) {
	for path, d := range loadDashboards(t) {
		t.Run(path, func(t *testing.T) {
			vars := map[string]bool{}
			for _, v := range d.Templating.List {
				vars[v.Name] = true
			}
			require.True(t, vars["datasource"], "a data-source variable")
			require.True(t, vars["cluster"] && vars["namespace"], "cluster and namespace variables")
			check := func(where string, ds dsRef, target json.RawMessage) {
				require.Equal(t, plugin.ID, ds.Type, where)
				require.Equal(t, "${datasource}", ds.UID, where)
				for _, m := range varRef.FindAllStringSubmatch(string(target), -1) {
					require.True(t, vars[m[1]] || strings.HasPrefix(m[1], "__"), "%s uses undefined variable $%s", where, m[1])
				}
				var q struct {
					QueryType string `json:"queryType"`
					Matchers  string `json:"matchers"`
				}
				require.NoError(t, json.Unmarshal(target, &q), where)
				require.NotEmpty(t, q.QueryType, where)
				// Scoped to the cluster and namespace variables, so one
				// dashboard serves each fleet of a shared store.
				require.Contains(t, q.Matchers, `cluster=~"$cluster"`, where)
				require.Contains(t, q.Matchers, `namespace=~"$namespace"`, where)
				// Valid options, as the backend reads them once the
				// frontend has replaced the variables.
				now := time.Now()
				_, err := models.ParseQuery(models.Request{RefID: "A", JSON: interpolate(t, target, exampleValues),
					TimeRange: models.TimeRange{From: now.Add(-time.Hour), To: now}, Interval: time.Minute, MaxDataPoints: 100})
				require.NoError(t, err, "%s: %s", where, target)
			}
			for _, p := range d.queryPanels() {
				require.NotEmpty(t, p.Targets, p.Title)
				for _, tg := range p.Targets {
					check(p.Title, p.Datasource, tg)
				}
			}
			var enabled bool
			for _, a := range d.Annotations.List {
				if a.Datasource.Type == plugin.ID {
					check("annotation "+a.Name, a.Datasource, a.Target)
					enabled = enabled || a.Enable
				}
			}
			require.True(t, enabled, "preemption annotations are on by default")
		})
	}
}

// provisioned reads the provisioning files and checks what they reference.
func TestProvisioningReferences(t *testing.T) {
	var dsFile struct {
		Datasources []struct {
			UID, Type, URL string
		} `yaml:"datasources"`
	}
	readYAML(t, root(t, "provisioning", "datasources", "vllm.yaml"), &dsFile)
	require.Len(t, dsFile.Datasources, 1)
	require.Equal(t, "vllm", dsFile.Datasources[0].UID)
	require.Equal(t, plugin.ID, dsFile.Datasources[0].Type)
	var prov struct {
		Providers []struct {
			Options struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, root(t, "provisioning", "dashboards", "vllm.yaml"), &prov)
	require.Equal(t, "/var/lib/grafana/dashboards", prov.Providers[0].Options.Path, "where docker-compose.yaml mounts dashboards/")
	for _, r := range alertRules(t) {
		require.NotEmpty(t, r.queries, r.title)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, into), path)
}

type alertRule struct {
	uid, title string
	// summary is the summary annotation's template.
	summary string
	queries []json.RawMessage
}

// alertRules returns each Grafana-managed rule's queries to the plugin.
func alertRules(t *testing.T) []alertRule {
	var f struct {
		Groups []struct {
			Rules []struct {
				UID         string            `yaml:"uid"`
				Title       string            `yaml:"title"`
				Annotations map[string]string `yaml:"annotations"`
				Data        []struct {
					DatasourceUID string         `yaml:"datasourceUid"`
					Model         map[string]any `yaml:"model"`
				} `yaml:"data"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, root(t, "provisioning", "alerting", "vllm-alerts.yaml"), &f)
	var out []alertRule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			ar := alertRule{uid: r.UID, title: r.Title, summary: r.Annotations["summary"]}
			for _, d := range r.Data {
				if d.DatasourceUID == "__expr__" {
					continue
				}
				require.Equal(t, "vllm", d.DatasourceUID, r.Title)
				raw, err := json.Marshal(d.Model)
				require.NoError(t, err)
				ar.queries = append(ar.queries, raw)
			}
			out = append(out, ar)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// featureFlags are the demo's flags (deploy/vllm-sim.flags) that turn on
// the families a default vLLM does not export (speculative decoding, LoRA,
// prefill/decode roles with NIXL transfers, errors), so the demo draws every
// panel of the dashboards' family rows. Each takes one value. Roles:
// instances 0 and 1 (one per model, 0 the hot one) decode, 2 and 3 prefill
// for them. The plain fleet (a default vLLM) is the demo's flags without
// them.
var featureFlags = []string{"--num-speculative-tokens", "--lora-adapters", "--max-loras", "--roles", "--kv-transfer-fail-rate", "--error-rate"}

// withoutFeatures drops featureFlags and their values from args.
func withoutFeatures(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(featureFlags, args[i]) {
			i++ // and its value
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// absentFamily is the vLLM flag named in the notice of each query type
// whose metrics the demo fleet, as shipped, does not export.
var absentFamily = map[string]string{
	"specDecode": "--speculative-config",
	"lora":       "--enable-lora",
	"kvTransfer": "--kv-transfer-config",
}

// notInDemo is the notice of each query type whose source the demo fleet
// has in neither form: cAdvisor (its engines are processes, not
// containers of a runtime cAdvisor reads), so the container panels must
// say so; TestContainerAgainstCgroups and TestContainerKubeletShape
// (pkg/query) draw them against real cAdvisor series.
var notInDemo = map[string]string{
	"container": "No cAdvisor is scraped",
}

// demoFleet starts vllm-sim with deploy/vllm-sim.flags (the demo's and the
// compose stack's flags; without featureFlags unless features), and
// Prometheus of the given kind with deploy/prometheus — the same files —
// and returns Prometheus' URL.
func demoFleet(t *testing.T, kind promtest.Kind, features bool) (string, []string) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "vllm-sim")
	build := exec.Command("go", "build", "-o", sim, "./cmd/vllm-sim")
	build.Dir = root(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	promDir := filepath.Join(dir, "prometheus")
	require.NoError(t, os.CopyFS(promDir, os.DirFS(root(t, "deploy", "prometheus"))))
	require.NoError(t, os.MkdirAll(filepath.Join(promDir, "targets"), 0o755))
	flags, err := os.ReadFile(root(t, "deploy", "vllm-sim.flags"))
	require.NoError(t, err)
	var args []string
	for _, line := range strings.Split(string(flags), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			args = append(args, strings.Fields(line)...)
		}
	}
	for _, f := range featureFlags {
		require.Contains(t, args, f, "the demo turns every family on, so its dashboards draw every panel")
	}
	if !features {
		args = withoutFeatures(args)
	}
	// Simulated time runs 20× faster so a 10-minute burst cycle fits the test.
	args = append(args, "--speed", "20", "--targets-file", filepath.Join(promDir, "targets", "vllm.json"))
	cmd := exec.Command(sim, args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The node exporter under the fleet, as scripts/demo.sh starts it: the host panels need it.
	node := promtest.StartNodeExporter(t)
	require.NoError(t, os.WriteFile(filepath.Join(promDir, "targets", "node.json"), []byte(`[{"targets": ["`+node+`"]}]`), 0o644))
	srv := promtest.Start(t, promtest.Options{Backend: kind, ConfigFile: filepath.Join(promDir, "prometheus.yml")})
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[5m]) >= 7`, 8, 90*time.Second)
	// The length heatmaps ask for a 1m min step (exact counts per step):
	// 80s of 5s scrapes hold a whole step aligned to the minute.
	srv.WaitForSeries(t, `count_over_time(vllm:num_requests_running[2m]) >= 16`, 8, 2*time.Minute)
	return srv.URL, targetAddrs(t, filepath.Join(promDir, "targets", "vllm.json"))
}

// targetAddrs reads the instances vllm-sim wrote into its targets file.
func targetAddrs(t *testing.T, path string) []string {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var groups []struct {
		Targets []string `json:"targets"`
	}
	require.NoError(t, json.Unmarshal(raw, &groups))
	var out []string
	for _, g := range groups {
		out = append(out, g.Targets...)
	}
	require.NotEmpty(t, out)
	return out
}

// demoAgent runs one node agent with a simulated GPU per engine following
// the fleet, as the compose stack's node-agent service does.
func demoAgent(t *testing.T, instances []string) string {
	bin := filepath.Join(t.TempDir(), "vllm-node-agent")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vllm-node-agent")
	build.Dir = root(t)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	follow := make([]string, len(instances))
	for i, a := range instances {
		follow[i] = "http://" + a + "/metrics"
	}
	u, _ := startAgent(t, bin, "gpu-node", strings.Join(follow, ","), "--simulate", "8")
	return u
}

// TestDashboardsAgainstFleet runs every panel, annotation and alert query
// through the plugin binary against Prometheus 2 and 3 (each with the demo's
// configuration and rules) scraping the demo fleet: under Prometheus 2 the
// plain fleet (the demo without featureFlags, as a default vLLM), where the
// panels of families it lacks must carry a notice naming the vLLM flag;
// under Prometheus 3 the demo as shipped, where every panel must draw data.
func TestDashboardsAgainstFleet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind     promtest.Kind
		features bool
	}{
		{promtest.Prometheus2, false},
		{promtest.Prometheus3, true},
	}
	for _, tt := range tests {
		t.Run(tt.kind.Name(), func(t *testing.T) {
			t.Parallel()
			dashboardsAgainstFleet(t, tt.kind, tt.features)
		})
	}
}

func dashboardsAgainstFleet(t *testing.T, kind promtest.Kind, features bool) {
	host := grafanahost.Launch(t, grafanahost.Build(t))
	url, instances := demoFleet(t, kind, features)
	agentURL := demoAgent(t, instances)
	js, err := json.Marshal(map[string]any{"scrapeInterval": "5s", "agentUrls": []string{agentURL}})
	require.NoError(t, err)
	ds := backend.DataSourceInstanceSettings{UID: "vllm", URL: url, JSONData: js}
	values := map[string][]string{}
	for _, kind := range []string{"models", "instances", "clusters", "namespaces"} {
		res := host.CallResource(t, ds, "GET", kind, nil)
		require.Equal(t, 200, res.Status, string(res.Body))
		var vs []string
		require.NoError(t, json.Unmarshal(res.Body, &vs))
		if kind == "models" || kind == "instances" {
			require.NotEmpty(t, vs, kind)
		} else {
			// The demo fleet has no cluster or namespace label: All is an
			// empty alternation, cluster=~"()", which every series matches.
			require.Empty(t, vs, kind)
		}
		values[strings.TrimSuffix(kind, "s")] = vs
	}
	now := time.Now()
	run := func(t *testing.T, ref string, target json.RawMessage, headers map[string]string) backend.DataResponse {
		q := backend.DataQuery{RefID: ref, JSON: interpolate(t, target, values), Interval: 5 * time.Second, MaxDataPoints: 300,
			TimeRange: backend.TimeRange{From: now.Add(-3 * time.Minute), To: now}}
		return host.QueryData(t, ds, headers, q).Responses[ref]
	}
	for path, d := range loadDashboards(t) {
		for _, p := range d.queryPanels() {
			for i, tg := range p.Targets {
				t.Run(fmt.Sprintf("%s/%s/%d", d.UID, p.Title, i), func(t *testing.T) {
					r := run(t, "A", tg, nil)
					require.NoError(t, r.Error, path)
					checkPanelFrames(t, p, r.Frames)
					if notice := notInDemo[queryType(t, tg)]; notice != "" {
						require.Contains(t, framesNoticeText(r.Frames), notice, "panel %q: the demo lacks its source, the notice must say so", p.Title)
						return
					}
					if flag := absentFamily[queryType(t, tg)]; flag != "" && !features {
						require.Contains(t, framesNoticeText(r.Frames), flag, "panel %q: the fleet lacks the family, the notice must say how to turn it on", p.Title)
						return
					}
					shown := finiteValues(p.visible(t, r.Frames))
					require.Positive(t, shown, "dashboard %q panel %q target %d returned no finite value it shows: %s", d.Title, p.Title, i, tg)
					if features && len(p.hidden(t)) > 0 {
						require.Less(t, shown, finiteValues(r.Frames), "panel %q: its overrides match no series name", p.Title)
					}
				})
			}
		}
		for _, a := range d.Annotations.List {
			if a.Datasource.Type != plugin.ID {
				continue
			}
			t.Run(d.UID+"/annotations/"+a.Name, func(t *testing.T) {
				r := run(t, "Anno", a.Target, nil)
				require.NoError(t, r.Error)
				require.Greater(t, r.Frames[0].Rows(), 0, "the bursty fleet preempts")
			})
		}
	}
	for _, rule := range alertRules(t) {
		for _, q := range rule.queries {
			t.Run("alert/"+rule.title, func(t *testing.T) {
				r := run(t, "A", q, map[string]string{backend.FromAlertHeaderName: "true"})
				require.NoError(t, r.Error)
				require.Positive(t, finiteValues(r.Frames), "alert %q query returned no finite value: %s", rule.title, q)
				for _, f := range r.Frames {
					require.Equal(t, data.FrameTypeTimeSeriesMulti, f.Meta.Type)
				}
			})
		}
	}
}

// checkPanelFrames checks that the frames fit the panel that draws them:
// a heatmap gets pre-bucketed heatmap-rows frames (the panel does not
// calculate), a table a table frame.
func checkPanelFrames(t *testing.T, p panel, frames data.Frames) {
	t.Helper()
	want := map[string]data.FrameType{"heatmap": "heatmap-rows", "table": data.FrameTypeTable}[p.Type]
	if want == "" || len(frames) == 0 || frames[0].Meta == nil || frames[0].Meta.Type == "" {
		return // the fleet and saturation tables are typed by their own tests
	}
	for _, f := range frames {
		require.Equal(t, want, f.Meta.Type, "panel %q (%s)", p.Title, p.Type)
	}
}

func queryType(t *testing.T, target json.RawMessage) string {
	var q struct {
		QueryType string `json:"queryType"`
	}
	require.NoError(t, json.Unmarshal(target, &q))
	return q.QueryType
}

// framesNoticeText joins the notices of the frames.
func framesNoticeText(frames data.Frames) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString(noticeText(f))
	}
	return b.String()
}

// interpolate does what the frontend (src/datasource.ts) does with "All"
// selected: a filter entry "$var" becomes every value, and $var inside raw
// PromQL an escaped regex alternation.
func interpolate(t *testing.T, target json.RawMessage, values map[string][]string) json.RawMessage {
	var q map[string]any
	require.NoError(t, json.Unmarshal(target, &q))
	for k, v := range q {
		switch vv := v.(type) {
		case []any:
			var out []any
			for _, e := range vv {
				if s, ok := e.(string); ok && strings.HasPrefix(s, "$") {
					for _, x := range values[strings.TrimPrefix(s, "$")] {
						out = append(out, x)
					}
					continue
				}
				out = append(out, e)
			}
			q[k] = out
		case string:
			// Raw PromQL: as the frontend's promqlFormat does for several values.
			q[k] = regexp.MustCompile(`\$\{?(\w+)\}?`).ReplaceAllStringFunc(vv, func(m string) string {
				name := strings.Trim(m, "${}")
				vals, ok := values[name]
				if !ok {
					return m // a built-in such as $__rate_interval, resolved by the backend
				}
				quoted := make([]string, len(vals))
				for i, x := range vals {
					// Regex-escaped, then escaped again for the PromQL string it lands in.
					quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(x), `\`, `\\`)
				}
				return "(" + strings.Join(quoted, "|") + ")"
			})
		}
	}
	out, err := json.Marshal(q)
	require.NoError(t, err)
	return out
}

// finiteValues counts the finite numbers in the value fields of frames
// (integer table cells, such as the LoRA counts, included): a panel whose
// series are empty or NaN-only draws nothing, however many rows its frames
// have.
func finiteValues(frames data.Frames) int {
	n := 0
	for _, f := range frames {
		for _, fld := range f.Fields {
			for i := 0; i < fld.Len(); i++ {
				if v, ok := fld.ConcreteAt(i); ok && isFinite(v) {
					n++
				}
			}
		}
	}
	return n
}

func isFinite(v any) bool {
	switch x := v.(type) {
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
	case int64, int32, int, uint64:
		return true
	}
	return false
}
