package deploytest

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/inferops/vllm-datasource/pkg/models"
)

const helmKubernetesFile = "deploy/helm/grafana-values-kubernetes.yaml"

// manifests are deploy/kubernetes/'s objects, each decoded strictly into
// its Kubernetes or prometheus-operator API type.
type manifests struct {
	daemonSet appsv1.DaemonSet
	service   corev1.Service
	agentSA   corev1.ServiceAccount
	agentNP   networkingv1.NetworkPolicy
	agentPM   monitoringv1.PodMonitor
	vllmPM    monitoringv1.PodMonitor
	// rules are the PrometheusRules by file name.
	rules        map[string]monitoringv1.PrometheusRule
	scaledObject kedaScaledObject
	hpa          autoscalingv2.HorizontalPodAutoscaler
	filesByKind  map[string][]string
	// namespaces are the Namespace objects by name; namespaceFiles their files.
	namespaces     map[string]corev1.Namespace
	namespaceFiles map[string]string
	// namespaced maps each namespaced object's file to its namespace.
	namespaced map[string]string
}

// strictDecode decodes YAML as the API server does: case-sensitive field
// names, and unknown, duplicate or differently cased fields are errors
// (the standard library's JSON matches names case-insensitively).
func strictDecode(raw []byte, obj any) error {
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return err
	}
	strictErrs, err := kjson.UnmarshalStrict(js, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// decodeStrict decodes a manifest into obj, failing on unknown or
// duplicate fields (a typo such as readOnlyRootFileSystem), and checks its
// apiVersion and kind.
func decodeStrict(t *testing.T, raw []byte, obj any, apiVersion, kind string) {
	t.Helper()
	require.NoError(t, strictDecode(raw, obj))
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &meta))
	require.Equal(t, apiVersion+" "+kind, meta.APIVersion+" "+meta.Kind)
}

func readManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(repoPath(t, "deploy/kubernetes/*.yaml"))
	require.NoError(t, err)
	// The autoscalers sit one folder down: `kubectl apply -f deploy/kubernetes/`
	// does not recurse, and an admin applies one of the two, not both.
	scalers, err := filepath.Glob(repoPath(t, "deploy/kubernetes/autoscaling/*.yaml"))
	require.NoError(t, err)
	files = append(files, scalers...)
	var m manifests
	m.filesByKind = map[string][]string{}
	m.rules = map[string]monitoringv1.PrometheusRule{}
	m.namespaces, m.namespaceFiles, m.namespaced = map[string]corev1.Namespace{}, map[string]string{}, map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(raw), "\n---", "%s: one object per file", f)
		var meta struct {
			Kind     string
			Metadata struct{ Namespace string }
		}
		require.NoError(t, yaml.Unmarshal(raw, &meta), f)
		name := filepath.Base(f)
		if meta.Kind != "Namespace" {
			require.NotEmpty(t, meta.Metadata.Namespace, "%s: every namespaced object names its namespace", f)
			m.namespaced[name] = meta.Metadata.Namespace
		}
		m.filesByKind[meta.Kind] = append(m.filesByKind[meta.Kind], name)
		switch {
		case meta.Kind == "DaemonSet":
			decodeStrict(t, raw, &m.daemonSet, "apps/v1", "DaemonSet")
		case meta.Kind == "Service":
			decodeStrict(t, raw, &m.service, "v1", "Service")
		case meta.Kind == "Namespace":
			var ns corev1.Namespace
			decodeStrict(t, raw, &ns, "v1", "Namespace")
			m.namespaces[ns.Name], m.namespaceFiles[ns.Name] = ns, name
		case meta.Kind == "ServiceAccount":
			decodeStrict(t, raw, &m.agentSA, "v1", "ServiceAccount")
		case meta.Kind == "NetworkPolicy":
			decodeStrict(t, raw, &m.agentNP, "networking.k8s.io/v1", "NetworkPolicy")
		case meta.Kind == "PodMonitor" && strings.HasPrefix(name, "node-agent"):
			decodeStrict(t, raw, &m.agentPM, "monitoring.coreos.com/v1", "PodMonitor")
		case meta.Kind == "PodMonitor":
			decodeStrict(t, raw, &m.vllmPM, "monitoring.coreos.com/v1", "PodMonitor")
		case meta.Kind == "ScaledObject":
			decodeStrict(t, raw, &m.scaledObject, "keda.sh/v1alpha1", "ScaledObject")
		case meta.Kind == "HorizontalPodAutoscaler":
			decodeStrict(t, raw, &m.hpa, "autoscaling/v2", "HorizontalPodAutoscaler")
		case meta.Kind == "PrometheusRule":
			var r monitoringv1.PrometheusRule
			decodeStrict(t, raw, &r, "monitoring.coreos.com/v1", "PrometheusRule")
			m.rules[name] = r
		default:
			t.Fatalf("%s: kind %q has no decoder in this test: add one", f, meta.Kind)
		}
	}
	return m
}

// TestKubernetesManifestsDecodeStrictly: every manifest is one object of a
// known API type with no unknown fields; a typo is caught.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	m := readManifests(t)
	require.Equal(t, map[string][]string{
		"Namespace": {"00-namespace-inference.yaml", "00-namespace-monitoring.yaml"},
		"DaemonSet": {"node-agent-daemonset.yaml"}, "Service": {"node-agent-service.yaml"},
		"ServiceAccount": {"node-agent-serviceaccount.yaml"}, "NetworkPolicy": {"node-agent-networkpolicy.yaml"},
		"PodMonitor": {"node-agent-podmonitor.yaml", "vllm-podmonitor.yaml"},
		"PrometheusRule": {"vllm-capacity-prometheusrule.yaml", "vllm-prometheusrule.yaml", "vllm-recording-prometheusrule.yaml",
			"vllm-slo-prometheusrule.yaml"},
		"ScaledObject": {"vllm-keda-scaledobject.yaml"}, "HorizontalPodAutoscaler": {"vllm-hpa.yaml"},
	}, m.filesByKind)

	raw, err := os.ReadFile(repoPath(t, "deploy/kubernetes/node-agent-daemonset.yaml"))
	require.NoError(t, err)
	typo := strings.Replace(string(raw), "readOnlyRootFilesystem", "readOnlyRootFileSystem", 1)
	require.ErrorContains(t, strictDecode([]byte(typo), &appsv1.DaemonSet{}), "readOnlyRootFileSystem", "strict decoding must reject a miscased field")
	unknown := strings.Replace(string(raw), "hostPID: true", "hostPID: true\n      hostPid: true", 1)
	require.Error(t, strictDecode([]byte(unknown), &appsv1.DaemonSet{}))
	dup := strings.Replace(string(raw), "hostPID: true", "hostPID: true\n      hostPID: false", 1)
	require.Error(t, strictDecode([]byte(dup), &appsv1.DaemonSet{}), "duplicate fields")
}

func agentContainer(t *testing.T, ds appsv1.DaemonSet) corev1.Container {
	t.Helper()
	require.Len(t, ds.Spec.Template.Spec.Containers, 1)
	return ds.Spec.Template.Spec.Containers[0]
}

// TestNodeAgentDaemonSet: what the agent needs on a GPU node.
func TestNodeAgentDaemonSet(t *testing.T) {
	ds := readManifests(t).daemonSet
	pod := ds.Spec.Template.Spec
	c := agentContainer(t, ds)
	require.True(t, pod.HostPID, "hostPID: the vLLM processes' /proc entries")
	require.NotNil(t, pod.RuntimeClassName)
	require.Equal(t, "nvidia", *pod.RuntimeClassName)
	require.True(t, labels.SelectorFromSet(ds.Spec.Selector.MatchLabels).Matches(labels.Set(ds.Spec.Template.Labels)), "the selector must match the pod template")

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	require.NotNil(t, env["NODE_NAME"].ValueFrom)
	require.Equal(t, "spec.nodeName", env["NODE_NAME"].ValueFrom.FieldRef.FieldPath)
	require.Contains(t, c.Args, "--node-name=$(NODE_NAME)")

	mounts := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.Name] = vm
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	for name, host := range map[string]string{"pod-resources": "/var/lib/kubelet/pod-resources", "proc": "/proc"} {
		require.True(t, mounts[name].ReadOnly, "%s is mounted read-only", name)
		require.NotNil(t, vols[name].HostPath, name)
		require.Equal(t, host, vols[name].HostPath.Path)
	}
	require.Contains(t, c.Args, "--proc-root="+mounts["proc"].MountPath)
	require.Contains(t, c.Args, "--pod-resources-socket="+mounts["pod-resources"].MountPath+"/kubelet.sock")
	require.True(t, mounts["token"].ReadOnly)
	require.NotNil(t, vols["token"].Secret)
	require.Contains(t, c.Args, "--token-file="+mounts["token"].MountPath+"/token")

	require.Len(t, c.Ports, 1)
	require.Contains(t, c.Args, "--listen=0.0.0.0:"+strconv.Itoa(int(c.Ports[0].ContainerPort)))
	for what, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		require.NotNil(t, p, what)
		require.Equal(t, "/healthz", p.HTTPGet.Path, "%s probe: the one path without a token", what)
		require.Equal(t, c.Ports[0].Name, p.HTTPGet.Port.String(), what)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		require.False(t, req.IsZero(), "request %s", r)
		require.False(t, lim.IsZero(), "limit %s", r)
		require.LessOrEqual(t, req.Cmp(lim), 0, "request %s within its limit", r)
	}
	require.NotNil(t, c.SecurityContext.AllowPrivilegeEscalation)
	require.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	require.Contains(t, c.SecurityContext.Capabilities.Drop, corev1.Capability("ALL"))
}

// TestNodeAgentWiring cross-checks names, ports, labels and the token
// between the DaemonSet, its Service, its PodMonitor, the token Secret the
// docs say to create, and the data source the Helm values provision.
func TestNodeAgentWiring(t *testing.T) {
	m := readManifests(t)
	ds, svc, pm := m.daemonSet, m.service, m.agentPM
	sec := documentedTokenSecret(t)
	c := agentContainer(t, ds)
	podLabels := labels.Set(ds.Spec.Template.Labels)
	for _, ns := range []string{svc.Namespace, pm.Namespace, sec.namespace} {
		require.Equal(t, ds.Namespace, ns, "every node-agent object in one namespace")
	}

	require.True(t, labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels), "the Service selects the agent pods")
	require.Len(t, svc.Spec.Ports, 1)
	require.Equal(t, c.Ports[0].Name, svc.Spec.Ports[0].TargetPort.String())
	require.Equal(t, c.Ports[0].ContainerPort, svc.Spec.Ports[0].Port)

	require.True(t, labels.SelectorFromSet(pm.Spec.Selector.MatchLabels).Matches(podLabels), "the PodMonitor selects the agent pods")
	require.Len(t, pm.Spec.PodMetricsEndpoints, 1)
	ep := pm.Spec.PodMetricsEndpoints[0]
	require.NotNil(t, ep.Port)
	require.Equal(t, c.Ports[0].Name, *ep.Port)
	require.Equal(t, "/metrics", ep.Path)

	// The token: one Secret for the agents' file, Prometheus' scrape and Grafana's data source.
	var tokenVolume string
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			tokenVolume = v.Secret.SecretName
		}
	}
	require.Equal(t, sec.name, tokenVolume)
	require.NotNil(t, ep.Authorization)
	require.Equal(t, sec.name, ep.Authorization.Credentials.Name)
	require.Equal(t, sec.key, ep.Authorization.Credentials.Key)
	require.Contains(t, c.Args, "--token-file=/var/run/secrets/vllm-node-agent/"+ep.Authorization.Credentials.Key)

	// Discovery: the data source finds agents as the targets of job agentJob;
	// the PodMonitor's jobLabel names the pod label whose value is the job.
	hv := readHelmValues(t, helmKubernetesFile)
	d := vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, helmKubernetesFile)
	require.NotEmpty(t, pm.Spec.JobLabel)
	require.Equal(t, d.JSONData["agentJob"], podLabels[pm.Spec.JobLabel])
	require.Equal(t, models.DefaultAgentJob, podLabels[pm.Spec.JobLabel], "the backend's default agent job")
	ref := hv.EnvValueFrom["VLLM_NODE_AGENT_TOKEN"].SecretKeyRef
	require.Equal(t, sec.name, ref.Name)
	require.Equal(t, sec.key, ref.Key)
	require.Equal(t, "${VLLM_NODE_AGENT_TOKEN}", d.SecureJSONData["agentToken"])
}

// TestHelmKubernetesDataSource: the profile and selector are ones the
// backend accepts, and the example vLLM PodMonitor scrapes /metrics.
func TestHelmKubernetesDataSource(t *testing.T) {
	hv := readHelmValues(t, helmKubernetesFile)
	d := vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, helmKubernetesFile)
	require.Equal(t, "vllm", d.UID, "dashboards and alert rules use uid vllm")
	profile, _ := d.JSONData["profile"].(string)
	_, ok := models.LookupProfile(profile)
	require.True(t, ok, "profile %q is one of %v", profile, models.ProfileNames())
	sel, _ := d.JSONData["selector"].(string)
	ms, err := models.ParseMatchers("selector", sel)
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	require.Equal(t, d.URL, d.JSONData["prometheusUrl"])

	vllm := readManifests(t).vllmPM
	require.NotEmpty(t, vllm.Spec.PodMetricsEndpoints)
	require.Equal(t, "/metrics", vllm.Spec.PodMetricsEndpoints[0].Path)
	require.NotNil(t, vllm.Spec.PodMetricsEndpoints[0].Port)
	require.Empty(t, vllm.Spec.JobLabel, "job stays <namespace>/<name>, as docs/kubernetes.md says")
}

// ruleManifests maps each rule file to the PrometheusRule that carries its
// groups to prometheus-operator.
var ruleManifests = map[string]string{
	rulesFile:          "vllm-prometheusrule.yaml",
	sloRulesFile:       "vllm-slo-prometheusrule.yaml",
	recordingRulesFile: "vllm-recording-prometheusrule.yaml",
	capacityRulesFile:  "vllm-capacity-prometheusrule.yaml",
}

// yamlGroups returns the groups under path (dot-separated keys, e.g.
// "spec.groups") of a YAML document as plain JSON values, so that two
// documents compare by meaning, not by layout or comments.
func yamlGroups(t *testing.T, raw []byte, path ...string) []any {
	t.Helper()
	js, err := yaml.YAMLToJSONStrict(raw)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(js, &v))
	for _, k := range path {
		obj, ok := v.(map[string]any)
		require.True(t, ok, "%s is not a mapping", k)
		v = obj[k]
	}
	groups, ok := v.([]any)
	require.True(t, ok, "%s is not a list", strings.Join(path, "."))
	return groups
}

// TestPrometheusRulesMatchRuleFiles: each PrometheusRule's spec.groups are
// exactly its rule file's groups (which promtool's unit tests cover), every
// rule file has one, the groups decode strictly into prometheus-operator's
// types, and promtool accepts the groups as the operator hands them over.
func TestPrometheusRulesMatchRuleFiles(t *testing.T) {
	m := readManifests(t)
	files, err := filepath.Glob(repoPath(t, "deploy/prometheus/rules/*.rules.yml"))
	require.NoError(t, err)
	require.Len(t, ruleManifests, len(files), "every rule file in deploy/prometheus/rules needs a PrometheusRule in deploy/kubernetes")
	bin := promtool(t)
	for ruleFile, manifest := range ruleManifests {
		t.Run(manifest, func(t *testing.T) {
			rules, err := os.ReadFile(repoPath(t, ruleFile))
			require.NoError(t, err)
			raw, err := os.ReadFile(repoPath(t, "deploy/kubernetes/"+manifest))
			require.NoError(t, err)
			want := yamlGroups(t, rules, "groups")
			require.Equal(t, want, yamlGroups(t, raw, "spec", "groups"),
				"deploy/kubernetes/%s: spec.groups differ from the groups of %s; copy them over (indented under spec)", manifest, ruleFile)
			drifted := strings.Replace(string(raw), "- record: ", "- record: drifted_", 1)
			require.False(t, reflect.DeepEqual(want, yamlGroups(t, []byte(drifted), "spec", "groups")), "the comparison must see a renamed rule")

			var spec monitoringv1.PrometheusRuleSpec
			require.NoError(t, strictDecode(rules, &spec), "%s must use only fields a PrometheusRule knows", ruleFile)
			pr, ok := m.rules[manifest]
			require.True(t, ok, manifest)
			require.Equal(t, spec, pr.Spec)

			out, err := yaml.Marshal(map[string]any{"groups": yamlGroups(t, raw, "spec", "groups")})
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "groups.yml")
			writeFile(t, path, string(out))
			res, ok := runTool(t, filepath.Dir(path), bin, "check", "rules", path)
			require.True(t, ok, "promtool check rules on %s's groups:\n%s", manifest, res)
		})
	}
}

// TestKubePrometheusStackSelectsObjects: kube-prometheus-stack's Prometheus
// selects PodMonitors and PrometheusRules by the label release=<Helm
// release>; every such object carries it, with one value to replace, and
// the rules sit in the node agent's (monitoring) namespace.
func TestKubePrometheusStackSelectsObjects(t *testing.T) {
	m := readManifests(t)
	objects := map[string]map[string]string{
		"node-agent-podmonitor.yaml": m.agentPM.Labels,
		"vllm-podmonitor.yaml":       m.vllmPM.Labels,
	}
	for name, r := range m.rules {
		objects[name] = r.Labels
		require.Equal(t, m.daemonSet.Namespace, r.Namespace, name)
	}
	release := m.agentPM.Labels["release"]
	require.Empty(t, validation.IsValidLabelValue(release))
	require.NotEmpty(t, release)
	for name, l := range objects {
		require.Equal(t, release, l["release"], "%s: the release label kube-prometheus-stack selects by", name)
	}
	for _, f := range slices.Sorted(maps.Keys(objects)) {
		raw, err := os.ReadFile(repoPath(t, "deploy/kubernetes/"+f))
		require.NoError(t, err)
		require.Contains(t, string(raw), "release: "+release+" # placeholder: your kube-prometheus-stack Helm release name", f)
	}
}

// upJobRegex finds the job matchers of the rules' up selectors.
var upJobRegex = regexp.MustCompile(`up\{job=~("[^"]*")`)

// promJob is the job prometheus-operator gives a PodMonitor's targets:
// the value of the pod label named by jobLabel, else <namespace>/<name>.
func promJob(pm monitoringv1.PodMonitor, podLabels map[string]string) string {
	if pm.Spec.JobLabel != "" && podLabels[pm.Spec.JobLabel] != "" {
		return podLabels[pm.Spec.JobLabel]
	}
	return pm.Namespace + "/" + pm.Name
}

// TestAlertRulesSelectShippedJobs: the job regex of the alerts on up
// matches the jobs every shipped scrape gives vLLM servers (the scrape job
// vllm of the Prometheus configs, the vLLM PodMonitor's <namespace>/vllm)
// and no other job: not the node agents', whose targets are no vLLM servers.
func TestAlertRulesSelectShippedJobs(t *testing.T) {
	rules, err := os.ReadFile(repoPath(t, rulesFile))
	require.NoError(t, err)
	found := upJobRegex.FindAllStringSubmatch(string(rules), -1)
	require.Len(t, found, 9, "VLLMEngineDown, VLLMMetricsMissing, VLLMEngineStalled and VLLMScrapeFlapping (two branches each) and VLLMTargetsMissing select up by job")
	pattern, err := strconv.Unquote(found[0][1])
	require.NoError(t, err)
	for _, f := range found {
		require.Equal(t, found[0][1], f[1], "one job regex in %s", rulesFile)
	}
	re := regexp.MustCompile("^(?:" + pattern + ")$") // PromQL anchors label regexes

	m := readManifests(t)
	want := map[string]bool{
		promJob(m.vllmPM, nil):                               true,
		promJob(m.agentPM, m.daemonSet.Spec.Template.Labels): false,
		m.agentPM.Namespace + "/" + m.agentPM.Name:           false, // the agents without jobLabel
	}
	for _, cfg := range []string{"deploy/prometheus/prometheus.yml", "deploy/prometheus/prometheus.compose.yml"} {
		var pc struct {
			ScrapeConfigs []struct {
				JobName string `yaml:"job_name"`
			} `yaml:"scrape_configs"`
		}
		readYAML(t, repoPath(t, cfg), &pc)
		for _, sc := range pc.ScrapeConfigs {
			want[sc.JobName] = sc.JobName == "vllm"
		}
	}
	require.Contains(t, want, "inference/vllm")
	require.Contains(t, want, "vllm")
	for job, match := range want {
		require.Equal(t, match, re.MatchString(job), "job %q against %s", job, pattern)
	}
}
