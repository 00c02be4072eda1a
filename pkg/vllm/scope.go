package vllm

import (
	"fmt"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// ScopeExpr adds the builder's scope and the query's own matchers (extra)
// to every series selector of a raw PromQL expression (the promql query
// type), so a data source scoped to one fleet never reads another's series,
// even from hand-written queries. The expression is parsed with Prometheus'
// parser and printed back, not edited as text; with nothing to add it is
// returned unchanged.
func (b Builder) ScopeExpr(expr string, extra []*labels.Matcher) (string, error) {
	add := append(cloneMatchers(b.Scope), extra...)
	if len(add) == 0 {
		return expr, nil
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return "", fmt.Errorf("parse expression to apply the data source selector: %w", err)
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			vs.LabelMatchers = append(vs.LabelMatchers, add...)
		}
		return nil
	})
	return e.String(), nil
}

func cloneMatchers(ms []*labels.Matcher) []*labels.Matcher {
	out := make([]*labels.Matcher, len(ms))
	copy(out, ms)
	return out
}
