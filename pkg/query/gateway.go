package query

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The endpoint picker recomputes its gauges every 5s over endpoints whose
// metrics are fresher than 2s (--refresh-prometheus-metrics-interval,
// --metrics-staleness-threshold): its queue may trail the engine's by that
// much plus a scrape, and is not a disagreement until it is further off.
const (
	pickerRefresh   = 5 * time.Second
	pickerStaleness = 2 * time.Second
)

// gatewayUnits are the units of the picker's signals in the queue.
var gatewayUnits = map[string]string{vllm.GatewayPoolKV: "percentunit", vllm.GatewayReady: "none"}

// gatewayNotices warns where the picker's last queue for an endpoint is
// outside what the engine itself reported over the picker's window.
func (p *plan) gatewayNotices(m prom.Matrix) []data.Notice {
	if p.query.Grouping != models.GroupInstance {
		return nil // only then is there one engine series per endpoint
	}
	window := pickerRefresh + pickerStaleness + p.settings.scrape
	engine, picker := map[string]*prom.Series{}, map[string]*prom.Series{}
	for _, s := range m {
		switch s.Labels[vllm.SignalTagLabel] {
		case "waiting":
			engine[p.builder.InstanceOf(s.Labels)] = s
		case vllm.GatewayEndpointQueue:
			picker[p.builder.InstanceOf(s.Labels)] = s
		}
	}
	var texts []string
	for inst, ps := range picker {
		es, ok := engine[inst]
		n := len(ps.Values)
		if !ok || n == 0 {
			continue
		}
		v, end := ps.Values[n-1], ps.Times[n-1]
		lo, hi := rangeSince(es, end.Add(-window), end)
		if math.IsNaN(lo) || (v >= lo && v <= hi) {
			continue
		}
		texts = append(texts, fmt.Sprintf("The endpoint picker's queue for %s (%g) disagrees with the engine's own (%g to %g over the last %s, the picker's refresh and staleness window plus a scrape): the picker routes on data that is stale or not this engine's.",
			inst, v, lo, hi, window))
	}
	sort.Strings(texts)
	return warnings(texts)
}

// rangeSince is the least and greatest value of a series in [from, to].
func rangeSince(s *prom.Series, from, to time.Time) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	for i, t := range s.Times {
		if t.Before(from) || t.After(to) {
			continue
		}
		v := s.Values[i]
		if math.IsNaN(lo) || v < lo {
			lo = v
		}
		if math.IsNaN(hi) || v > hi {
			hi = v
		}
	}
	return lo, hi
}

func warnings(texts []string) []data.Notice {
	out := make([]data.Notice, len(texts))
	for i, t := range texts {
		out[i] = data.Notice{Severity: data.NoticeSeverityWarning, Text: t}
	}
	return out
}
