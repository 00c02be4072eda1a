package deploytest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Issue 36 found `kubectl apply -f deploy/kubernetes/` unsafe as documented:
// it reset the agents' token to a shipped placeholder Secret on every apply,
// failed where the `inference` namespace did not exist, applied two
// autoscalers at once, and the docs skipped the recording-rules
// PrometheusRule; the DaemonSet's image was a stale tag published nowhere.
// These checks read the manifests, the Dockerfile and docs/kubernetes.md
// together, so each of those mistakes fails here.

const kubernetesDoc = "docs/kubernetes.md"

// tokenSecret is the agents' token Secret as the docs tell an admin to create it.
type tokenSecret struct{ namespace, name, key string }

// createSecret matches the documented command that creates the token Secret.
var createSecret = regexp.MustCompile(`kubectl -n (\S+) create secret generic (\S+) --from-(?:literal|file)=([A-Za-z0-9._-]+)=`)

// documentedTokenSecret reads the Secret docs/kubernetes.md creates; the
// DaemonSet's header comment must give the same command.
func documentedTokenSecret(t *testing.T) tokenSecret {
	t.Helper()
	found := func(file string) tokenSecret {
		raw, err := os.ReadFile(repoPath(t, file))
		require.NoError(t, err)
		m := createSecret.FindStringSubmatch(string(raw))
		require.NotNil(t, m, "%s says how to create the agents' token Secret (kubectl -n NS create secret generic NAME --from-…=KEY=…)", file)
		return tokenSecret{m[1], m[2], m[3]}
	}
	doc := found(kubernetesDoc)
	require.Equal(t, doc, found("deploy/kubernetes/node-agent-daemonset.yaml"), "the DaemonSet's comment and the docs create the same Secret")
	return doc
}

// baselineCapabilities are the capabilities the Pod Security Standards'
// baseline level lets a container add; any other needs "privileged".
var baselineCapabilities = []corev1.Capability{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL",
	"MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// needsPrivileged: whether the baseline Pod Security level rejects the pod
// (host namespaces, hostPath volumes, capabilities beyond baseline's).
func needsPrivileged(spec corev1.PodSpec) bool {
	if spec.HostPID || spec.HostNetwork || spec.HostIPC {
		return true
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			return true
		}
	}
	for _, c := range spec.Containers {
		if sc := c.SecurityContext; sc != nil && sc.Capabilities != nil {
			for _, cp := range sc.Capabilities.Add {
				if !slices.Contains(baselineCapabilities, cp) {
					return true
				}
			}
		}
	}
	return false
}

// TestKubernetesApplyIsSafe: applying the folder creates its namespaces
// before anything in them, ships no Secret, and the namespace the agents
// run in admits their pods.
func TestKubernetesApplyIsSafe(t *testing.T) {
	m := readManifests(t)
	require.Empty(t, m.filesByKind["Secret"], "no Secret is shipped: applying one would replace the admin's token")
	for file, ns := range m.namespaced {
		nsFile, ok := m.namespaceFiles[ns]
		require.True(t, ok, "%s lives in namespace %q, which no Namespace manifest creates", file, ns)
		require.Less(t, nsFile, file, "kubectl applies a folder in file-name order: %s must sort before %s", nsFile, file)
	}
	ds := m.daemonSet
	require.True(t, needsPrivileged(ds.Spec.Template.Spec), "the agents need the privileged level (the check below would be vacuous)")
	require.Equal(t, "privileged", m.namespaces[ds.Namespace].Labels["pod-security.kubernetes.io/enforce"],
		"the agents' namespace admits their pods under Pod Security admission")

	require.Equal(t, m.agentSA.Name, ds.Spec.Template.Spec.ServiceAccountName, "the agents run as their own service account")
	require.Equal(t, ds.Namespace, m.agentSA.Namespace)
	require.False(t, *ds.Spec.Template.Spec.AutomountServiceAccountToken, "the agent never calls the API: no token mounted")

	np, c := m.agentNP, agentContainer(t, ds)
	require.Equal(t, ds.Namespace, np.Namespace)
	sel := labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels)
	require.True(t, sel.Matches(labels.Set(ds.Spec.Template.Labels)), "the NetworkPolicy guards the agent pods")
	require.Len(t, np.Spec.Ingress, 1)
	require.Equal(t, c.Ports[0].Name, np.Spec.Ingress[0].Ports[0].Port.String(), "it opens the agents' port and nothing else")
	require.Equal(t, ds.Namespace, np.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"],
		"only the monitoring namespace (Prometheus, Grafana) reaches the agents")
}

// TestKubernetesDocsApplyInOrder: the documented commands create the
// namespace, then the token Secret in it, then apply the folder; and the
// doc names every manifest it applies (it once skipped the recording rules).
func TestKubernetesDocsApplyInOrder(t *testing.T) {
	m := readManifests(t)
	raw, err := os.ReadFile(repoPath(t, kubernetesDoc))
	require.NoError(t, err)
	doc := string(raw)
	sec := documentedTokenSecret(t)
	nsApply := strings.Index(doc, "kubectl apply -f deploy/kubernetes/"+m.namespaceFiles[sec.namespace])
	secret := createSecret.FindStringIndex(doc)[0]
	folder := strings.Index(doc, "kubectl apply -f deploy/kubernetes/\n")
	require.True(t, nsApply >= 0 && nsApply < secret && secret < folder,
		"namespace (%d), then the Secret (%d), then the folder (%d)", nsApply, secret, folder)
	for file := range m.namespaced {
		require.True(t, strings.Contains(doc, file+"`"), "%s says what %s is", kubernetesDoc, file)
	}
	require.NotEmpty(t, m.filesByKind["PrometheusRule"])
	require.False(t, strings.Contains(doc, "the two PrometheusRules"), "there are %d", len(m.filesByKind["PrometheusRule"]))
}

// imageRef matches a documented image build: -t <registry>/NAME:TAG.
var imageRef = regexp.MustCompile(`--target (\S+) -t (?:\S+/)?([a-z0-9._-]+):(\S+) \.`)

// TestNodeAgentImageIsTheRelease: the DaemonSet runs the image the docs
// build, tagged with the release, from a Dockerfile target that exists and
// holds the binary the container runs.
func TestNodeAgentImageIsTheRelease(t *testing.T) {
	version := packageVersion(t)
	c := agentContainer(t, readManifests(t).daemonSet)
	name, tag, ok := strings.Cut(c.Image[strings.LastIndex(c.Image, "/")+1:], ":")
	require.True(t, ok, "the image has a tag")
	require.Equal(t, version, tag, "the DaemonSet's image tag is the release (package.json)")

	dockerfile, err := os.ReadFile(repoPath(t, "deploy/docker/tools.Dockerfile"))
	require.NoError(t, err)
	stages := regexp.MustCompile(`(?m)^FROM \S+(?: AS (\S+))?$`).FindAllStringSubmatch(string(dockerfile), -1)
	require.NotEmpty(t, stages)
	final := stages[len(stages)-1][1]
	for _, file := range []string{kubernetesDoc, "deploy/kubernetes/node-agent-daemonset.yaml"} {
		raw, err := os.ReadFile(repoPath(t, file))
		require.NoError(t, err)
		b := imageRef.FindStringSubmatch(string(raw))
		require.NotNil(t, b, "%s says how to build the image", file)
		require.Equal(t, []string{final, name, version}, b[1:], "%s builds the final stage as the DaemonSet's image and release", file)
	}
	bin := c.Command[0]
	require.Contains(t, string(dockerfile), "-o /out/"+bin+" ./cmd/"+bin, "the image builds the binary the container runs")
	lastStage := string(dockerfile)[strings.LastIndex(string(dockerfile), "\nFROM "):]
	require.Regexp(t, `COPY --from=build .*/out/`+bin+`.* /usr/local/bin/`, lastStage, "the final stage holds it")
}
