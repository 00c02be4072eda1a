package deploytest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/inferops/vllm-datasource/pkg/models"
)

const helmKubernetesFile = "deploy/helm/grafana-values-kubernetes.yaml"

// manifests are deploy/kubernetes/'s objects, each decoded strictly into
// its Kubernetes or prometheus-operator API type.
type manifests struct {
	daemonSet   appsv1.DaemonSet
	service     corev1.Service
	secret      corev1.Secret
	agentPM     monitoringv1.PodMonitor
	vllmPM      monitoringv1.PodMonitor
	filesByKind map[string][]string
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
	var m manifests
	m.filesByKind = map[string][]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(raw), "\n---", "%s: one object per file", f)
		var meta struct{ Kind string }
		require.NoError(t, yaml.Unmarshal(raw, &meta), f)
		name := filepath.Base(f)
		m.filesByKind[meta.Kind] = append(m.filesByKind[meta.Kind], name)
		switch {
		case meta.Kind == "DaemonSet":
			decodeStrict(t, raw, &m.daemonSet, "apps/v1", "DaemonSet")
		case meta.Kind == "Service":
			decodeStrict(t, raw, &m.service, "v1", "Service")
		case meta.Kind == "Secret":
			decodeStrict(t, raw, &m.secret, "v1", "Secret")
		case meta.Kind == "PodMonitor" && strings.HasPrefix(name, "node-agent"):
			decodeStrict(t, raw, &m.agentPM, "monitoring.coreos.com/v1", "PodMonitor")
		case meta.Kind == "PodMonitor":
			decodeStrict(t, raw, &m.vllmPM, "monitoring.coreos.com/v1", "PodMonitor")
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
		"DaemonSet": {"node-agent-daemonset.yaml"}, "Service": {"node-agent-service.yaml"}, "Secret": {"node-agent-secret.yaml"},
		"PodMonitor": {"node-agent-podmonitor.yaml", "vllm-podmonitor.yaml"},
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
// between the DaemonSet, its Service, its PodMonitor, the Secret and the
// data source the Helm values provision.
func TestNodeAgentWiring(t *testing.T) {
	m := readManifests(t)
	ds, svc, pm, sec := m.daemonSet, m.service, m.agentPM, m.secret
	c := agentContainer(t, ds)
	podLabels := labels.Set(ds.Spec.Template.Labels)
	for _, ns := range []string{svc.Namespace, pm.Namespace, sec.Namespace} {
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
	require.Equal(t, sec.Name, tokenVolume)
	require.NotNil(t, ep.Authorization)
	require.Equal(t, sec.Name, ep.Authorization.Credentials.Name)
	require.Contains(t, sec.StringData, ep.Authorization.Credentials.Key)
	require.Contains(t, c.Args, "--token-file=/var/run/secrets/vllm-node-agent/"+ep.Authorization.Credentials.Key)

	// Discovery: the data source finds agents as the targets of job agentJob;
	// the PodMonitor's jobLabel names the pod label whose value is the job.
	hv := readHelmValues(t, helmKubernetesFile)
	d := vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, helmKubernetesFile)
	require.NotEmpty(t, pm.Spec.JobLabel)
	require.Equal(t, d.JSONData["agentJob"], podLabels[pm.Spec.JobLabel])
	require.Equal(t, models.DefaultAgentJob, podLabels[pm.Spec.JobLabel], "the backend's default agent job")
	ref := hv.EnvValueFrom["VLLM_NODE_AGENT_TOKEN"].SecretKeyRef
	require.Equal(t, sec.Name, ref.Name)
	require.Contains(t, sec.StringData, ref.Key)
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
	require.Empty(t, vllm.Spec.JobLabel, "job stays <namespace>/<name>, as the README's Kubernetes section says")
}
