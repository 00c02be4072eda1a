package query_test

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// TestQueryMatchersApplyWithoutSelector: a query's own matchers narrow
// every series selector it sends, whether or not the data source has a
// selector of its own.
func TestQueryMatchersApplyWithoutSelector(t *testing.T) {
	own := labels.MustNewMatcher(labels.MatchEqual, "namespace", "team-a")
	scope := labels.MustNewMatcher(labels.MatchEqual, "cluster", "eu-1")
	tests := []struct {
		name     string
		selector []*labels.Matcher
		js       string
	}{
		{name: "raw PromQL, no data-source selector", js: `{"queryType":"promql","expr":"sum(rate(vllm:generation_tokens_total[1m])) / sum(up)","matchers":"namespace=\"team-a\""}`},
		{name: "queue, no data-source selector", js: `{"queryType":"queue","matchers":"namespace=\"team-a\""}`},
		{name: "raw PromQL inside a selector", selector: []*labels.Matcher{scope}, js: `{"queryType":"promql","expr":"up","matchers":"namespace=\"team-a\""}`},
		{name: "queue inside a selector", selector: []*labels.Matcher{scope}, js: `{"queryType":"queue","matchers":"namespace=\"team-a\""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &scripted{}
			e := scriptedExecutor(p)
			e.Settings.Selector = tt.selector
			now := time.Now()
			r := run(t, e, dq("A", tt.js, now.Add(-time.Hour), now)).Responses["A"]
			require.NoError(t, r.Error)
			require.NotEmpty(t, p.exprs)
			want := append([]*labels.Matcher{own}, tt.selector...)
			for _, expr := range p.exprs {
				parsed, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
				require.NoError(t, err, expr)
				n := 0
				parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
					vs, ok := node.(*parser.VectorSelector)
					if !ok {
						return nil
					}
					n++
					for _, m := range want {
						require.Contains(t, matcherStrings(vs.LabelMatchers), m.String(), "selector %s of %s", vs, expr)
					}
					return nil
				})
				require.Positive(t, n, expr)
			}
		})
	}
}

func matcherStrings(ms []*labels.Matcher) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}
