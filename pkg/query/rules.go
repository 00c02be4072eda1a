package query

import (
	"context"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// RulesTTL is how long a recording-rule discovery is trusted: rule files
// change on deploys, not per query.
const RulesTTL = 5 * time.Minute

// RuleDiscovery caches which recorded series (of the shipped recording
// rules) one data source's Prometheus has, and their evaluation interval.
type RuleDiscovery struct {
	prom   Prometheus
	b      vllm.Builder // scope only
	prefix string
	now    func() time.Time

	mu      sync.Mutex
	set     vllm.RuleSet
	fetched time.Time
	// since is the earliest time a coverage probe found recorded series:
	// the rules have been evaluated from then on.
	since map[string]time.Time
}

// NewRuleDiscovery returns a discovery for the rule prefix inside the
// builder's scope.
func NewRuleDiscovery(p Prometheus, b vllm.Builder, prefix string, now func() time.Time) *RuleDiscovery {
	if now == nil {
		now = time.Now
	}
	return &RuleDiscovery{prom: p, b: vllm.Builder{Scope: b.Scope}, prefix: prefix, now: now, since: map[string]time.Time{}}
}

// Get returns the cached rule set, refreshing it when stale. An error
// from Prometheus gives an empty set (queries plan raw) that is not cached.
func (d *RuleDiscovery) Get(ctx context.Context) vllm.RuleSet {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if !d.fetched.IsZero() && now.Sub(d.fetched) < RulesTTL {
		return d.set
	}
	set, err := d.discover(ctx, now)
	if err != nil {
		return vllm.RuleSet{Prefix: d.prefix}
	}
	d.set, d.fetched = set, now
	return set
}

// Invalidate forgets the cache (health's "Save & test").
func (d *RuleDiscovery) Invalidate() {
	d.mu.Lock()
	d.fetched, d.since = time.Time{}, map[string]time.Time{}
	d.mu.Unlock()
}

// discover lists the recorded names, then measures the interval and
// looks for pod-labelled series on the first preferred name present.
func (d *RuleDiscovery) discover(ctx context.Context, now time.Time) (vllm.RuleSet, error) {
	set := vllm.RuleSet{Prefix: d.prefix, Present: map[string]bool{}}
	names, err := d.prom.MetricNames(ctx, d.b.RuleNameSelector(d.prefix), now.Add(-detectionLookback), now)
	if err != nil {
		return set, err
	}
	for _, n := range names {
		set.Present[n] = true
	}
	probe := ""
	for _, n := range vllm.RuleDiscoveryNames(d.prefix) {
		if set.Present[n] {
			probe = n
			break
		}
	}
	if probe == "" {
		return set, nil
	}
	if set.Interval, err = d.interval(ctx, probe, now); err != nil {
		return set, err
	}
	pods, _, err := d.prom.Query(ctx, d.b.RulePodProbe(probe), now)
	set.PodSeries = len(pods) > 0 && pods[0].Value > 0
	return set, err
}

// interval measures the evaluation interval of one recorded name.
func (d *RuleDiscovery) interval(ctx context.Context, name string, now time.Time) (time.Duration, error) {
	return d.b.RuleInterval(ctx, vllm.FirstValue(d.prom.Query), name, now)
}

// covered reports whether the recorded series name existed (inside the
// scope) at the range's start, i.e. the rule group ran then. A positive
// answer is remembered: once loaded, rules keep being evaluated.
func (d *RuleDiscovery) covered(ctx context.Context, p *plan, name string) bool {
	d.mu.Lock()
	since, ok := d.since[name]
	d.mu.Unlock()
	if ok && !p.iv.Start.Before(since) {
		return true
	}
	v, _, err := p.memo.instantQuery(ctx, p.b.RuleCoverage(name, models.Filters{}), p.iv.Start, p.iv.Step)
	if err != nil || len(v) == 0 || v[0].Value <= 0 {
		return false
	}
	d.mu.Lock()
	if cur, ok := d.since[name]; !ok || p.iv.Start.Before(cur) {
		d.since[name] = p.iv.Start
	}
	d.mu.Unlock()
	return true
}

// rules is the data source's rule discovery, made on first use; nil when
// the recordingRules setting is off.
func (e *Executor) rules() *RuleDiscovery {
	if !e.Settings.RecordingRules {
		return nil
	}
	e.rulesOnce.Do(func() {
		if e.Rules == nil {
			b := vllm.ForSettings(e.Settings)
			e.Rules = NewRuleDiscovery(e.Prom, b, e.Settings.RulePrefix, e.Now)
		}
	})
	return e.Rules
}

// onRules returns the rule set when this query may be planned on recorded
// series: the setting is on, the rules are found, and the question
// (step, window, grouping, matchers) is one they answer exactly.
func (p *plan) onRules(ctx context.Context, window string) (*RuleDiscovery, vllm.RuleSet, bool) {
	return p.onRulesWith(ctx, window, p.q.Filters)
}

// onRulesWith is onRules for a query that filters with f.
func (p *plan) onRulesWith(ctx context.Context, window string, f models.Filters) (*RuleDiscovery, vllm.RuleSet, bool) {
	d := p.e.rules()
	if d == nil || p.alert {
		return nil, vllm.RuleSet{}, false
	}
	rs := d.Get(ctx)
	if !rs.Found() {
		return nil, rs, false
	}
	why := p.b.RuleEligible(rs, vllm.RuleQuestion{Step: p.iv.Step, Window: window, Grouping: p.q.Grouping, Filters: f})
	return d, rs, why == ""
}

// usable reports whether every recorded name of the plan is present and
// existed at the range's start.
func (p *plan) usable(ctx context.Context, d *RuleDiscovery, rs vllm.RuleSet, rp vllm.RulePlan) bool {
	for _, n := range rp.Names {
		if !rs.Present[n] {
			return false
		}
	}
	return len(rp.Names) > 0 && d.covered(ctx, p, rp.Names[0])
}

// waitTimeExpr is the waitTime expression: on recorded bucket rates when
// they answer exactly, with the notice that says so; raw otherwise.
func (p *plan) waitTimeExpr(ctx context.Context) (string, []data.Notice) {
	raw := p.b.WaitTime(p.q.Family, p.q.Quantiles, p.q.Live, p.q.Grouping, p.q.Filters, p.window)
	d, rs, ok := p.onRules(ctx, p.window)
	if !ok {
		return raw, nil
	}
	rp, ok := p.b.WaitTimeFromRules(rs.Prefix, p.q.Family, p.q.Quantiles, p.q.Live, p.q.Grouping, p.q.Filters, p.window)
	if !ok || !p.usable(ctx, d, rs, rp) {
		return raw, nil
	}
	return rp.Expr, []data.Notice{rulesNotice(rs)}
}

// queueSignals are the queue's expressions with running and waiting read
// from the recorded sums when they answer exactly.
func (p *plan) queueSignals(ctx context.Context) ([]vllm.SignalExpr, []data.Notice) {
	sigs := p.b.QueueSignals(p.q.Grouping, p.q.Filters)
	d, rs, ok := p.onRules(ctx, "")
	if !ok {
		return sigs, nil
	}
	used := false
	for i, s := range sigs {
		rp, ok := p.b.QueueSignalFromRules(rs.Prefix, s.Name, p.q.Grouping, p.q.Filters)
		if ok && p.usable(ctx, d, rs, rp) {
			sigs[i].Expr, used = rp.Expr, true
		}
	}
	if !used {
		return sigs, nil
	}
	return sigs, []data.Notice{rulesNotice(rs)}
}

// topkRanking is topK's ranking expression, on recorded series when they
// answer exactly (the ranked signal is one the rules record, and the
// series query's filter by the ranked servers' identity labels is one they
// keep); rng and step are its subquery's.
func (p *plan) topkRanking(ctx context.Context, raw, rng, step string) (string, []data.Notice) {
	rs, ok := p.topkOnRules(ctx)
	if !ok {
		return raw, nil
	}
	w, _ := vllm.RankWindow(p.q.RankBy, p.window)
	rp, _ := p.b.TopKRankingFromRules(rs.Prefix, p.q.RankBy, p.q.Aggregation, p.q.K, p.q.Grouping, p.q.Filters, w, rng, step)
	return rp.Expr, []data.Notice{rulesNotice(rs)}
}

// topkSeries is topK's series expression for the ranked instances, on
// recorded series when the ranking was.
func (p *plan) topkSeries(ctx context.Context, raw string, instances []string) string {
	rs, ok := p.topkOnRules(ctx)
	if !ok {
		return raw
	}
	w, _ := vllm.RankWindow(p.q.RankBy, p.window)
	rp, _ := p.b.TopKSeriesFromRules(rs.Prefix, p.q.RankBy, p.q.Grouping, p.q.Filters, w, instances)
	return rp.Expr
}

// topkOnRules reports whether topK's ranked signal is read from rules.
func (p *plan) topkOnRules(ctx context.Context) (vllm.RuleSet, bool) {
	w, ok := vllm.RankWindow(p.q.RankBy, p.window)
	if !ok {
		return vllm.RuleSet{}, false
	}
	f := p.q.Filters
	f.Instances = []string{"ranked"} // the series query filters by the ranked servers
	d, rs, ok := p.onRulesWith(ctx, w, f)
	if !ok {
		return rs, false
	}
	rp, ok := p.b.TopKRankingFromRules(rs.Prefix, p.q.RankBy, "last", 1, p.q.Grouping, p.q.Filters, w, "", "")
	return rs, ok && p.usable(ctx, d, rs, rp)
}

func rulesNotice(rs vllm.RuleSet) data.Notice {
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.RulesNotice(rs.Prefix, rs.Interval)}
}
