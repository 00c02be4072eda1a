package deploytest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// shippedDataSources are the vLLM data sources every shipped provisioning
// file creates, by file.
func shippedDataSources(t *testing.T) map[string]dataSource {
	t.Helper()
	var prov dataSourceFile
	readYAML(t, repoPath(t, "provisioning/datasources/vllm.yaml"), &prov)
	out := map[string]dataSource{"provisioning/datasources/vllm.yaml": vllmDataSource(t, prov.DataSources, "provisioning/datasources/vllm.yaml")}
	for _, f := range []string{helmValuesFile, helmKubernetesFile} {
		hv := readHelmValues(t, f)
		out[f] = vllmDataSource(t, hv.DataSources["datasources.yaml"].DataSources, f)
	}
	return out
}

// TestShippedDataSourcesKeepTheProfile: a user who sets a profile on a
// shipped data source gets that profile's identity and prefixes; no
// shipped setting (instanceLabel, metricPrefix) silently overrides it.
// Each shipped file names its profile, one the backend accepts.
func TestShippedDataSourcesKeepTheProfile(t *testing.T) {
	for file, ds := range shippedDataSources(t) {
		t.Run(file+"/names its profile", func(t *testing.T) {
			profile, _ := ds.JSONData["profile"].(string)
			require.Contains(t, models.ProfileChoices(), profile)
		})
		for _, name := range models.ProfileNames() {
			t.Run(file+"/"+name, func(t *testing.T) {
				js := map[string]any{}
				for k, v := range ds.JSONData {
					js[k] = v
				}
				js["profile"] = name
				raw, err := json.Marshal(js)
				require.NoError(t, err)
				s, err := models.ParseSettings(models.Instance{URL: ds.URL, JSONData: raw})
				require.NoError(t, err)
				p, _ := models.LookupProfile(name)
				require.Equal(t, p.Prefixes, s.MetricPrefixes, "the profile's prefixes")
				require.Equal(t, p.Identity, s.Identity, "the profile's identity labels")
				require.Equal(t, p.Identity[len(p.Identity)-1], s.InstanceLabel)
			})
		}
	}
}
