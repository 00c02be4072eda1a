package vllm

import (
	"testing"
	"unicode/utf8"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// FuzzBuilders feeds arbitrary label values to every builder: each
// generated expression must parse, and the matchers must match exactly the
// literal value (so no value can change the meaning of the query).
func FuzzBuilders(f *testing.F) {
	for _, v := range nastyValues {
		f.Add(v, "0")
	}
	f.Add("\xff\xfe", "1")
	f.Add(`\\\"`, `"`)
	f.Fuzz(func(t *testing.T, value, engine string) {
		if value == "" || engine == "" || !utf8.ValidString(value) || !utf8.ValidString(engine) {
			return // the query model rejects empty and non-UTF-8 filter values
		}
		b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
		filt := models.Filters{Models: []string{value}, Instances: []string{value}, Engines: []string{engine, value}}
		for name, expr := range expressions(t, b, models.GroupInstanceEngine, filt) {
			e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
			if err != nil {
				t.Fatalf("%s does not parse: %v\n%s", name, err, expr)
			}
			parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok {
					return nil
				}
				for _, m := range vs.LabelMatchers {
					if m.Name == "model_name" && !m.Matches(value) {
						t.Fatalf("%s: matcher %s does not match %q", name, m, value)
					}
					if m.Name == "model_name" && m.Matches(value+"x") {
						t.Fatalf("%s: matcher %s also matches %q", name, m, value+"x")
					}
				}
				return nil
			})
		}
	})
}
