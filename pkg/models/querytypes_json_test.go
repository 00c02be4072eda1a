package models_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// queryTypesFile is the editor's copy of the query table.
const queryTypesFile = "../../src/queryTypes.json"

// TestQueryTypesJSON fails when src/queryTypes.json, which the editor
// imports, says something other than the query table. It compares the
// values, not the bytes, so reformatting the file (prettier) is no drift.
func TestQueryTypesJSON(t *testing.T) {
	js, err := models.SchemaJSON(func(f string) []float64 { return vllm.LatencyBuckets[vllm.SLOFamilies[f]] })
	require.NoError(t, err)
	raw, err := os.ReadFile(queryTypesFile)
	require.NoError(t, err)
	var want, got any
	require.NoError(t, json.Unmarshal(js, &want))
	require.NoError(t, json.Unmarshal(raw, &got), "src/queryTypes.json is not JSON")
	require.Equal(t, want, got,
		"src/queryTypes.json differs from the query table (pkg/models/querytable.go): "+
			"regenerate it with `go generate ./pkg/models/` and commit it")
}

// TestQuerySchemaLookups pins that the table is complete: every query type
// has an entry, each default is one of its values, each default grouping
// one of the type's groupings.
func TestQuerySchemaLookups(t *testing.T) {
	s := models.QuerySchema()
	require.Len(t, s.Types, len(models.QueryTypes))
	for _, ts := range s.Types {
		t.Run(string(ts.Type), func(t *testing.T) {
			require.Contains(t, ts.Groupings, ts.DefaultGrouping)
			for _, o := range ts.Options {
				if d, ok := o.Default.(string); ok && len(o.Values) > 0 {
					require.Contains(t, o.Values, d, o.Field)
				}
				for alias, v := range o.Aliases {
					require.Contains(t, o.Values, v, alias)
				}
			}
		})
	}
}
