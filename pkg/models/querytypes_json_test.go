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

// queryTypesTSFile is the editor's query types and their wording.
const queryTypesTSFile = "../../src/queryTypes.gen.ts"

// TestQueryTypesTS fails when src/queryTypes.gen.ts, which the editor
// compiles against, is not exactly what the generator writes from the table
// and its wording (each entry's worded). Byte for byte: the file is generated
// and prettier leaves it alone (.prettierignore).
func TestQueryTypesTS(t *testing.T) {
	ts, err := models.SchemaTS()
	require.NoError(t, err)
	raw, err := os.ReadFile(queryTypesTSFile)
	require.NoError(t, err)
	require.Equal(t, string(ts), string(raw),
		"src/queryTypes.gen.ts differs from the query table (pkg/models/querytable.go): "+
			"regenerate it with `go generate ./pkg/models/` and commit it")
}

// TestQueryWording pins that every query type, and only those, has a label
// and a description for the editor's type picker.
func TestQueryWording(t *testing.T) {
	for _, qt := range models.QueryTypes {
		w, ok := models.Wording(qt)
		require.True(t, ok, "%s has no wording in its query-table entry (worded)", qt)
		require.NotEmpty(t, w.Label, qt)
		require.NotEmpty(t, w.Description, qt)
		require.NotEqual(t, string(qt), w.Label, "%s: the label is the bare type name", qt)
	}
	_, ok := models.Wording("nope")
	require.False(t, ok)
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
