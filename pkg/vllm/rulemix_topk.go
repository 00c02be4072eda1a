package vllm

import (
	"fmt"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// This file builds topK's ranking in two parts, for a range that starts
// before the recording rules did (pkg/query/rulemix_topk.go): the raw
// series' aggregation over the steps before the rules' first step and
// the rules' over the steps from it, which the query package joins into
// the aggregation over the whole range.

// The tags on an avg part's two answers (SignalTagLabel).
const (
	RankPartSum   = "sum"
	RankPartCount = "count"
)

// TopKRankingPart is the per-group aggregation of rankBy over the steps of
// one part of the range: the subquery [rng:step] at the part's last
// instant. It has no topk (the range's top k need not be either part's),
// and avg is asked as the sum and the count of the steps, tagged
// RankPartSum and RankPartCount, so the parts join exactly: max of the
// maxima, (sum + sum) / (count + count). "last" has no parts: the range's
// last value is the rules part's alone.
func (b Builder) TopKRankingPart(rankBy, aggregation string, g models.Grouping, f models.Filters, window, rng, step string) (string, error) {
	x, err := b.Rank(rankBy, g, f, window)
	if err != nil {
		return "", err
	}
	return rankPart(x, aggregation, rng, step)
}

// TopKRankingPartFromRules is TopKRankingPart read from recorded series.
func (b Builder) TopKRankingPartFromRules(prefix, rankBy, aggregation string, g models.Grouping, f models.Filters, window, rng, step string) (RulePlan, bool) {
	rp, ok := b.rankFromRules(prefix, rankBy, g, f, window)
	if !ok {
		return RulePlan{}, false
	}
	x, err := rankPart(rp.Expr, aggregation, rng, step)
	if err != nil {
		return RulePlan{}, false
	}
	return RulePlan{Expr: x, Names: rp.Names}, true
}

// rankPart aggregates the per-group expression x over a part (see
// TopKRankingPart).
func rankPart(x, aggregation, rng, step string) (string, error) {
	sub := fmt.Sprintf("(%s)[%s:%s]", x, rng, step)
	switch aggregation {
	case "max":
		return "max_over_time(" + sub + ")", nil
	case "avg":
		return or([]string{tag("sum_over_time("+sub+")", RankPartSum), tag("count_over_time("+sub+")", RankPartCount)}), nil
	}
	return "", fmt.Errorf("aggregation %q is not ranked in parts; allowed: max, avg", aggregation)
}
