package models

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every type of the table parses into its own options struct, named after
// it, and every option of its entry is a field of that struct: the table
// and the structs cannot drift apart.
func TestEveryTypeHasItsOptionsStruct(t *testing.T) {
	for _, s := range QuerySchema().Types {
		t.Run(string(s.Type), func(t *testing.T) {
			js := `{"queryType":"` + string(s.Type) + `","expr":"up"}`
			q, err := ParseQuery(Request{RefID: "A", JSON: []byte(js)})
			require.NoError(t, err)
			typ := reflect.TypeOf(q.Options)
			require.NotNil(t, typ, "no options struct")
			require.True(t, strings.EqualFold(typ.Name(), string(s.Type)+"Options"), "%s parses into %s", s.Type, typ.Name())
			for _, o := range s.Options {
				_, found := typ.FieldByNameFunc(func(name string) bool {
					f, _ := typ.FieldByName(name)
					tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
					return tag == o.Field
				})
				require.True(t, found, "option %s has no field in %s", o.Field, typ.Name())
			}
		})
	}
}

// Each kind's rules, read from the table: defaults, aliases, the objective
// gating its own fields, and the errors naming the field.
func TestOptionsParsedByKind(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		want    any
		wantErr string
	}{
		{name: "choice alias", js: `{"queryType":"fleet","format":"both"}`, want: FleetOptions{Format: "table"}},
		{name: "numbers default copied", js: `{"queryType":"kvTransfer","quantiles":[]}`, want: KVTransferOptions{Quantiles: []float64{0.5, 0.9, 0.99}}},
		{name: "integer from text", js: `{"queryType":"topk","k":" 7 ","format":"series"}`,
			want: TopKOptions{K: 7, RankBy: "waiting", Aggregation: "max", Format: "series", AsSeries: true}},
		{name: "field name in any case, as encoding/json reads it", js: `{"queryType":"workload","VIEW":"prompt"}`, want: WorkloadOptions{View: "prompt"}},
		{name: "availability ignores a bad family", js: `{"queryType":"slo","objective":"availability","family":"nope","threshold":-1}`,
			want: SLOOptions{Objective: SLOAvailability, Target: 0.999, Window: "28d", WindowDuration: 28 * 24 * 3600e9}},
		{name: "text trimmed", js: `{"queryType":"promql","expr":"  up ","unit":" s "}`, want: PromQLOptions{Expr: "up", Unit: "s"}},
		{name: "boolean of the wrong type", js: `{"queryType":"waitTime","live":"yes"}`, wantErr: `malformed query JSON: live is "yes", not true or false`},
		{name: "choices of the wrong type", js: `{"queryType":"slo","signals":"attainment"}`, wantErr: "signals is \"attainment\", not a list of strings"},
		{name: "unknown choice entry", js: `{"queryType":"slo","signals":["burn"]}`, wantErr: `signals "burn" is unknown; allowed: attainment`},
		{name: "number hint", js: `{"queryType":"slo","target":99}`, wantErr: "target 99 is out of range (0, 1); write 99% as 0.99"},
		{name: "required text hint", js: `{"queryType":"promql","expr":" "}`, wantErr: "expr is empty: a promql query needs a PromQL expression"},
		{name: "options of another type are ignored", js: `{"queryType":"queue","family":7,"k":0}`, want: QueueOptions{}},
		{name: "queue live", js: `{"queryType":"queue","live":true}`, want: QueueOptions{Live: true}},
		{name: "fleet live with its worst rows", js: `{"queryType":"fleet","live":true,"worst":"3"}`, want: FleetOptions{Format: "table", Worst: 3, Live: true}},
		{name: "fleet worst below zero", js: `{"queryType":"fleet","worst":-1}`, wantErr: "worst -1 is out of range; allowed: whole numbers 0 to 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(Request{RefID: "A", JSON: []byte(tt.js)})
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidQuery)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, q.Options)
		})
	}
}
