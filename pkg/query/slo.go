package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// sloUnits: attainment and budget are shares; burn rates are multiples of
// the rate that spends exactly the budget over the window.
var sloUnits = map[string]string{"attainment": string(vllm.UnitPercent), "error_budget_left": string(vllm.UnitPercent)}

// slo answers a latency objective per grouping: attainment and budget
// over the objective's window, and the workbook's burn-rate pairs.
func (p *plan) slo(ctx context.Context) (data.Frames, error) {
	key := vllm.SLOFamilies[p.q.SLO.Family]
	bound, snapped := vllm.SnapBound(key, p.q.SLO.Threshold)
	o := vllm.Objective{Key: key, Bound: bound, Target: p.q.SLO.Target, Window: p.q.SLO.Window}
	sigs := pick(p.b.SLOSignals(o, p.q.Grouping, p.q.Filters), p.q.SLO.Signals)
	m, warn, err := p.signals(ctx, sigs)
	if err != nil {
		return nil, err
	}
	exprs := make([]string, len(sigs))
	for i, s := range sigs {
		exprs[i] = s.Expr
	}
	notices := append(append([]data.Notice{}, p.notices...), warningNotices(warn)...)
	if snapped {
		notices = append(notices, snapNotice(p.q.SLO.Family, key, p.q.SLO.Threshold, bound, p.b.Prefix))
	}
	notices = append(notices, p.signalNotices(ctx, tagsOf(m), []need{{key: key, tags: models.SLOSignals,
		without: "no attainment or burn rate can be computed"}}, key)...)
	return frames.TimeSeries(m, frames.SeriesOptions{Units: sloUnits, Unit: string(vllm.UnitNone), Legend: p.q.Legend,
		GroupLabels: p.b.GroupLabels(p.q.Grouping), Executed: frames.Executed(strings.Join(exprs, "\n"), p.iv.Step),
		Notices: notices}), nil
}

// pick keeps the signals named in want, all when want is empty.
func pick(sigs []vllm.SignalExpr, want []string) []vllm.SignalExpr {
	if len(want) == 0 {
		return sigs
	}
	keep := map[string]bool{}
	for _, w := range want {
		keep[w] = true
	}
	var out []vllm.SignalExpr
	for _, s := range sigs {
		if keep[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// snapNotice says the threshold was moved onto a bucket bound, and which
// bounds vLLM has for the family.
func snapNotice(family string, key vllm.SignalKey, threshold, bound float64, prefix string) data.Notice {
	s, _ := vllm.Lookup(key)
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
		"threshold %ss is not a bucket bound of %s (%s), so the histogram cannot count requests under it: using %ss, the nearest bound. vLLM's bounds for %s: %s.",
		fmtSeconds(threshold), family, strings.Join(s.WireNames(prefix), ", "), fmtSeconds(bound), family, vllm.BoundsText(key))}
}

func fmtSeconds(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
