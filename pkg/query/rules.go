package query

import (
	"context"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// This file is the recording-rule machinery every type shares: discovery
// (RuleDiscovery), whether the rules answer a question (onRules, exactness
// and the nearest policy) and the notice that says so. Each type's own plan
// on the rules lives in its type's file (waittime.go, queue.go, fleet.go,
// saturation.go, topk_rules.go); mixing raw and recorded steps is
// rulemix.go's.

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
	// first is the first evaluation a probe found inside a range that
	// started before the rules (rulemix.go); forgotten at each refresh, so
	// rules backfilled later are seen within RulesTTL.
	first map[string]time.Time
}

// NewRuleDiscovery returns a discovery for the rule prefix inside the
// builder's scope.
func NewRuleDiscovery(p Prometheus, b vllm.Builder, prefix string, now func() time.Time) *RuleDiscovery {
	if now == nil {
		now = time.Now
	}
	return &RuleDiscovery{prom: p, b: vllm.Builder{Scope: b.Scope}, prefix: prefix, now: now, since: map[string]time.Time{}, first: map[string]time.Time{}}
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
	d.set, d.fetched, d.first = set, now, map[string]time.Time{}
	return set
}

// Invalidate forgets the cache (health's "Save & test").
func (d *RuleDiscovery) Invalidate() {
	d.mu.Lock()
	d.fetched, d.since, d.first = time.Time{}, map[string]time.Time{}, map[string]time.Time{}
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
// scope) at the range's start, i.e. the rule group ran then.
func (d *RuleDiscovery) covered(ctx context.Context, p *plan, name string) bool {
	return d.coveredAt(ctx, p, name, p.timeRange.Start)
}

// coveredAt reports whether the recorded series name existed (inside the
// scope) at t: an evaluation within the look-back before t. A positive
// answer is remembered: once loaded, rules keep being evaluated.
func (d *RuleDiscovery) coveredAt(ctx context.Context, p *plan, name string, t time.Time) bool {
	d.mu.Lock()
	since, ok := d.since[name]
	d.mu.Unlock()
	if ok && !t.Before(since) {
		return true
	}
	v, _, err := p.memo.instantQuery(ctx, p.builder.RuleCoverage(name, models.Filters{}), t, p.timeRange.Step)
	if err != nil || len(v) == 0 || v[0].Value <= 0 {
		return false
	}
	d.mu.Lock()
	if cur, ok := d.since[name]; !ok || t.Before(cur) {
		d.since[name] = t
	}
	d.mu.Unlock()
	return true
}

// rules is the data source's rule discovery, made on first use; nil when
// the recordingRules setting is off.
func (e *Executor) rules() *RuleDiscovery {
	if !e.Settings.RecordingRules.On() {
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

// ruleUse is a plan's answer on recorded series: the discovery, what it
// found, and how the rules fit the question (the recorded window to read).
type ruleUse struct {
	d   *RuleDiscovery
	rs  vllm.RuleSet
	fit vllm.RuleFit
	// window is the query's own rate window, for the notice.
	window string
}

// onRules returns how this query may be planned on recorded series: the
// setting is on, the rules are found, and the question (step, window,
// grouping, matchers) is one they answer exactly, or closely under the
// nearest policy.
func (p *plan) onRules(ctx context.Context, window string) (ruleUse, bool) {
	return p.onRulesWith(ctx, window, p.query.Filters)
}

// onRulesWith is onRules for a query that filters with f.
func (p *plan) onRulesWith(ctx context.Context, window string, f models.Filters) (ruleUse, bool) {
	return p.onRulesFor(ctx, vllm.RuleQuestion{Step: p.timeRange.Step, Window: window, Grouping: p.query.Grouping, Filters: f})
}

// onRulesFor is onRules for the question q, asked under the data source's
// policy and scrape interval; q.Step 0 is an instant question, which reads
// one evaluation whatever the step.
func (p *plan) onRulesFor(ctx context.Context, q vllm.RuleQuestion) (ruleUse, bool) {
	d := p.exec.rules()
	if d == nil || p.alert {
		return ruleUse{}, false
	}
	rs := d.Get(ctx)
	if !rs.Found() {
		return ruleUse{rs: rs}, false
	}
	if q.Step == 0 {
		q.Step = rs.Interval
	}
	q.Policy, q.Scrape = p.settings.rules, p.settings.rulesScrape
	fit := p.builder.RuleFit(rs, q)
	return ruleUse{d: d, rs: rs, fit: fit, window: q.Window}, fit.Why == ""
}

// usable reports whether every recorded name of the plan is present and
// existed at the range's start.
func (p *plan) usable(ctx context.Context, u ruleUse, rp vllm.RulePlan) bool {
	return p.usableAt(ctx, u, rp, p.timeRange.Start)
}

// usableAt reports whether every recorded name of the plan is present and
// existed at t.
func (p *plan) usableAt(ctx context.Context, u ruleUse, rp vllm.RulePlan, t time.Time) bool {
	return u.present(rp) && u.d.coveredAt(ctx, p, rp.Names[0], t)
}

// notice is the notice on an answer read from the rules: which, how often
// evaluated, and, for a close answer, the window used and how stale.
func (u ruleUse) notice() data.Notice {
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: vllm.RulesFitNotice(u.rs.Prefix, u.rs.Interval, u.fit, u.window)}
}
