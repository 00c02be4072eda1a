package vllm

// The topk type's PromQL: the ranking over the whole range and the ranked
// groups' series, raw, on the recording rules, and in two parts for a range
// that starts before the rules did.

import (
	"fmt"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Rank is the per-group expression topk ranks by.
func (b Builder) Rank(rankBy string, g models.Grouping, f models.Filters, window string) (string, error) {
	gl := b.GroupLabels(g)
	switch rankBy {
	case "waiting":
		return agg("sum", gl, b.union(Waiting, f, "")), nil
	case "running":
		return agg("sum", gl, b.union(Running, f, "")), nil
	case "kv_usage":
		return agg("avg", gl, b.union(KVUsage, f, "")), nil
	case "wait_p99":
		return fmt.Sprintf("histogram_quantile(0.99, %s)", agg("sum", append([]string{"le"}, gl...), b.rateUnion(QueueTime, f, "_bucket", window))), nil
	case "preemption_rate":
		return agg("sum", gl, b.youngRateUnion(Preemptions, f, "", window)), nil
	}
	return "", fmt.Errorf("rankBy %q is unknown; allowed: waiting, running, kv_usage, wait_p99, preemption_rate", rankBy)
}

// TopKRanking is the instant query (evaluated at the range end) that picks
// the k worst groups over the whole range. rng and step are PromQL
// durations for the subquery.
func (b Builder) TopKRanking(rankBy, aggregation string, k int, g models.Grouping, f models.Filters, window, rng, step string) (string, error) {
	x, err := b.Rank(rankBy, g, f, window)
	if err != nil {
		return "", err
	}
	return topKRanking(x, aggregation, k, rng, step)
}

// topKRanking ranks the per-group expression x (see TopKRanking).
func topKRanking(x, aggregation string, k int, rng, step string) (string, error) {
	switch aggregation {
	case "max", "avg":
		return fmt.Sprintf("topk(%d, %s_over_time((%s)[%s:%s]))", k, aggregation, x, rng, step), nil
	case "last":
		return fmt.Sprintf("topk(%d, %s)", k, x), nil
	}
	return "", fmt.Errorf("aggregation %q is unknown; allowed: max, avg, last", aggregation)
}

// TopKSeries is the range query for the ranked groups: their signal series
// and, tagged "engines", the engine count and model of each instance.
// Callers keep only the ranked groups, so exactly k series come back.
func (b Builder) TopKSeries(rankBy string, g models.Grouping, f models.Filters, window string, instances []string) (string, error) {
	f.Instances = instances
	x, err := b.Rank(rankBy, g, f, window)
	if err != nil {
		return "", err
	}
	return b.topKSeries(x, g, f), nil
}

// topKSeries tags the ranked expression x (filtered to the ranked
// instances) and the engine count (see TopKSeries).
func (b Builder) topKSeries(x string, g models.Grouping, f models.Filters) string {
	engines := agg("count", append(b.GroupLabels(g), "model_name"), b.union(Running, f, ""))
	return or([]string{tag(x, "value"), tag(engines, "engines")})
}

// rankRules are the topK signals the rules record exactly, and the rate
// window they need ("" for gauges).
var rankRules = map[string]bool{"waiting": false, "running": false, "wait_p99": true}

// RankWindow is the rate window a rules-backed ranking by rankBy reads
// ("" for the gauges); ok is false for the signals no rule records
// exactly (kv_usage averages raw series, preemption_rate corrects young
// series).
func RankWindow(rankBy, window string) (string, bool) {
	rate, ok := rankRules[rankBy]
	if !ok {
		return "", false
	}
	if rate {
		return window, true
	}
	return "", true
}

// rankFromRules is Rank read from recorded series.
func (b Builder) rankFromRules(prefix, rankBy string, g models.Grouping, f models.Filters, window string) (RulePlan, bool) {
	if rankBy != "wait_p99" {
		return b.QueueSignalFromRules(prefix, rankBy, g, f)
	}
	bucket := ruleLatencyName(prefix, QueueTime, "_bucket", window)
	if ruleSuffix(window) == "" {
		return RulePlan{}, false
	}
	x := fmt.Sprintf("histogram_quantile(0.99, %s)", agg("sum", append([]string{"le"}, b.GroupLabels(g)...), selector(bucket, b.matchers(f))))
	return RulePlan{Expr: x, Names: []string{bucket}}, true
}

// TopKRankingFromRules is TopKRanking read from recorded series.
func (b Builder) TopKRankingFromRules(prefix, rankBy, aggregation string, k int, g models.Grouping, f models.Filters, window, rng, step string) (RulePlan, bool) {
	rp, ok := b.rankFromRules(prefix, rankBy, g, f, window)
	if !ok {
		return RulePlan{}, false
	}
	x, err := topKRanking(rp.Expr, aggregation, k, rng, step)
	if err != nil {
		return RulePlan{}, false
	}
	return RulePlan{Expr: x, Names: rp.Names}, true
}

// TopKSeriesFromRules is TopKSeries with the ranked signal read from
// recorded series (the engine count stays raw: it counts raw series).
func (b Builder) TopKSeriesFromRules(prefix, rankBy string, g models.Grouping, f models.Filters, window string, instances []string) (RulePlan, bool) {
	f.Instances = instances
	rp, ok := b.rankFromRules(prefix, rankBy, g, f, window)
	if !ok {
		return RulePlan{}, false
	}
	return RulePlan{Expr: b.topKSeries(rp.Expr, g, f), Names: rp.Names}, true
}

// This file builds topK's ranking in two parts, for a range that starts
// before the recording rules did (pkg/query/topk_rules.go): the raw
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
