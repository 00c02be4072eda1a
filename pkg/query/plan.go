package query

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// This file holds the plan and what every type's answer goes through on
// its way to frames: running signals concurrently, tagging each series
// with its signal, Prometheus' warnings and the role grouping's labels.

// plan is everything one query needs once it is parsed. A handler
// (registry.go) reads it; nothing changes it after Executor.plan.
type plan struct {
	exec *Executor
	// query is the parsed, validated query.
	query models.Query
	// timeRange is the range with Grafana's step math applied: start, end,
	// step and $__rate_interval.
	timeRange interval.Result
	// builder writes the PromQL, with the profile's prefix and detection.
	builder vllm.Builder
	det     *Detector // the resolved profile's (names, bucket bounds)
	// window is timeRange.RateInterval as PromQL writes it.
	window string
	memo   *memo
	alert  bool
	// settings are the data source's settings a handler needs, resolved
	// once (resolveSettings): no handler reads the executor's settings.
	settings planSettings
	// notices are the plan's own (a clamped step). Every answer starts
	// from a copy of them (noticesFor). They are never built with spare
	// capacity, so even an append to them elsewhere copies rather than
	// writes into an array that two answers' frames would share.
	notices []data.Notice
}

// planSettings are the data source's settings as the handlers use them,
// each default applied once here.
type planSettings struct {
	// scrape is the configured scrape interval as loaded (zero only for
	// settings built in code).
	scrape time.Duration
	// rulesScrape is scrape, the default when unset (as pkg/interval
	// assumes): what the recording rules' fit is judged against.
	rulesScrape time.Duration
	// rules is the recording-rules policy.
	rules models.RulesPolicy
	// stallWindow is how long an engine must hold requests without
	// progress to count as stalled (fleet's state, saturation's verdict).
	stallWindow time.Duration
	// saturation are the saturation verdicts' thresholds.
	saturation models.SaturationSettings
	// cost prices the GPUs (capacity's efficiency columns).
	cost models.CostSettings
	// container joins cAdvisor's series to the servers.
	container models.ContainerSettings
}

// resolveSettings applies the defaults of settings built in code (not
// loaded) once per plan.
func resolveSettings(s models.Settings) planSettings {
	out := planSettings{scrape: s.ScrapeInterval, rulesScrape: s.ScrapeInterval, rules: s.RecordingRules,
		stallWindow: s.StallWindow, saturation: s.Saturation, cost: s.Cost, container: s.Container}
	if out.cost.GPUsPerServer < 1 {
		out.cost.GPUsPerServer = 1
	}
	if out.rulesScrape <= 0 {
		out.rulesScrape = interval.DefaultScrape
	}
	if out.stallWindow <= 0 {
		out.stallWindow = max(models.DefaultStallWindow, 2*s.ScrapeInterval)
	}
	if out.saturation == (models.SaturationSettings{}) {
		out.saturation = models.DefaultSaturation()
	}
	return out
}

// noticesFor is a new notice list for one answer: the plan's notices,
// then each list in order. Frames built from it share no backing array
// with the plan or with another answer.
func (p *plan) noticesFor(lists ...[]data.Notice) []data.Notice {
	n := len(p.notices)
	for _, l := range lists {
		n += len(l)
	}
	out := make([]data.Notice, 0, n)
	out = append(out, p.notices...)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// executed is the executed query an answer shows: its expressions, one a
// line, and the step they ran at.
func (p *plan) executed(exprs ...string) string {
	return frames.Executed(strings.Join(exprs, "\n"), p.timeRange.Step)
}

// exprsOf lists the expressions of sigs, in order, for executed.
func exprsOf(sigs []vllm.SignalExpr) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = s.Expr
	}
	return out
}

// rng is the plan's range as the Prometheus client takes it.
func (p *plan) rng() v1.Range {
	return v1.Range{Start: p.timeRange.Start, End: p.timeRange.End, Step: p.timeRange.Step}
}

// series runs one range query and frames it.
func (p *plan) series(ctx context.Context, expr string, o frames.SeriesOptions) (data.Frames, prom.Matrix, error) {
	m, warn, err := p.memo.rangeQuery(ctx, expr, p.rng())
	if err != nil {
		return nil, nil, err
	}
	o.Legend = p.query.Legend
	if len(o.GroupLabels) == 0 { // gpu and dcgm name their series by node and GPU, not by the query's grouping
		o.GroupLabels = p.builder.GroupLabels(p.query.Grouping)
	}
	o.Executed = p.executed(expr)
	o.Notices = p.noticesFor(o.Notices, warningNotices(warn))
	return frames.TimeSeries(m, o), m, nil
}

// signals runs the expressions concurrently and merges their answers,
// each series tagged with its signal. Series are copies with their own
// labels; the columns are shared with the cache, read-only.
func (p *plan) signals(ctx context.Context, sigs []vllm.SignalExpr) (prom.Matrix, []string, error) {
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (prom.Matrix, []string, error) {
		return p.memo.rangeQuery(ctx, s.Expr, p.rng())
	})
	if err != nil {
		return nil, nil, err
	}
	return taggedAll(answers, sigs), warn, nil
}

// taggedAll merges the answers of sigs (in their order), each series
// tagged with its signal's name.
func taggedAll(answers []prom.Matrix, sigs []vllm.SignalExpr) prom.Matrix {
	var out prom.Matrix
	for i, m := range answers {
		for _, s := range m {
			out = append(out, tagged(s, sigs[i].Name))
		}
	}
	return out
}

// concurrently runs query for every expression at once and returns the
// answers in the order of sigs, with every warning, or the first error (in
// that order). A panic in one of them is that expression's error: it runs
// off the executor's goroutine, whose recovery cannot see it.
func concurrently[T any](sigs []vllm.SignalExpr, query func(vllm.SignalExpr) (T, []string, error)) ([]T, []string, error) {
	type answer struct {
		v    T
		warn []string
		err  error
	}
	answers := make([]answer, len(sigs))
	var wg sync.WaitGroup
	for i, s := range sigs {
		wg.Go(func() {
			a := &answers[i]
			defer func() {
				if r := recover(); r != nil {
					a.err = newPanicError(r)
				}
			}()
			a.v, a.warn, a.err = query(s)
		})
	}
	wg.Wait()
	out := make([]T, len(sigs))
	var warn []string
	for i, a := range answers {
		if a.err != nil {
			return nil, nil, a.err
		}
		warn = append(warn, a.warn...)
		out[i] = a.v
	}
	return out, warn, nil
}

// tagged is a copy of s with its signal tag set to name.
func tagged(s *prom.Series, name string) *prom.Series {
	c := *s
	c.Labels = make(map[string]string, len(s.Labels)+1)
	for k, v := range s.Labels {
		c.Labels[k] = v
	}
	c.Labels[vllm.SignalTagLabel] = name
	return &c
}

// warningNotices turns Prometheus warnings into frame notices.
func warningNotices(warnings []string) []data.Notice {
	out := make([]data.Notice, 0, len(warnings))
	for _, w := range warnings {
		out = append(out, data.Notice{Severity: data.NoticeSeverityWarning, Text: "Prometheus: " + strings.TrimSpace(w)})
	}
	return out
}

// RoleLabel is the label every series of a role grouping carries in frames:
// the role whichever stack label it came from, for legends ({{role}}) and
// for panels that do not know the stack.
const RoleLabel = "role"

// roleSeries, for a role grouping, labels each series with its role and
// says when no series has one (the answer is then one group, never an
// error). Series are copied before they are labelled: the answer's
// series may be shared with the cache. Other groupings pass through.
func (p *plan) roleSeries(m prom.Matrix) (prom.Matrix, []data.Notice) {
	if p.query.Grouping != models.GroupRole {
		return m, nil
	}
	out := make(prom.Matrix, len(m))
	found := false
	for i, s := range m {
		role := p.builder.RoleOf(s.Labels)
		if role == "" {
			out[i] = s
			continue
		}
		found = true
		c := *s
		c.Labels = make(map[string]string, len(s.Labels)+1)
		for k, v := range s.Labels {
			c.Labels[k] = v
		}
		c.Labels[RoleLabel] = role
		out[i] = &c
	}
	return out, p.roleNotices(len(m) > 0 && !found)
}

// roleNotices is the info notice of a role grouping without any role label.
func (p *plan) roleNotices(none bool) []data.Notice {
	if !none {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: p.builder.NoRoleText()}}
}

// roles reads each engine's role from the fleet's role expression.
func (p *plan) roles(v model.Vector) map[engineKey]string {
	out := make(map[engineKey]string, len(v))
	for _, s := range v {
		ls := make(map[string]string, len(s.Metric))
		for k, x := range s.Metric {
			ls[string(k)] = string(x)
		}
		if r := p.builder.RoleOf(ls); r != "" {
			out[p.keyOf(s.Metric)] = r
		}
	}
	return out
}
