package query

import (
	"context"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The fleet type: its handler, each engine's state and score, its plan on
// the recording rules (fleetOnRules) and its GPU columns.

// Fleet states.
const (
	StateUp      = "up"
	StateDown    = "down"
	StateStale   = "stale"
	StateMissing = "missing metrics"
	// StateStalled: up, requests running or waiting throughout the stall
	// window, and no token or request counter moved over it (the
	// VLLMEngineStalled alert's condition): a hung engine, not a queue.
	StateStalled = "stalled"
	// StateSleeping: put to sleep on purpose (vLLM's sleep mode); neither
	// down nor stalled.
	StateSleeping = "sleeping"
	// StateFlapping: up now, but its server's scrape failed between
	// successes in the table's range (up changed at least twice): a
	// /metrics too slow under load or failing now and then, which leaves
	// gaps in every panel.
	StateFlapping = "flapping"
)

// stateWeight puts broken engines first in the fleet table (see fleetScore).
var stateWeight = map[string]float64{StateDown: 1000, StateStalled: 900, StateStale: 800, StateFlapping: 700, StateMissing: 500,
	StateUp: 0, StateSleeping: 0}

// fleetChecked are the per-engine signals whose absence makes an engine
// that is up "missing metrics".
var fleetChecked = []string{vllm.FleetWaiting, vllm.FleetKVUsage, vllm.FleetPreemptions, vllm.FleetQueueP99,
	vllm.FleetTTFTP99, vllm.FleetRequests, vllm.FleetGenTokens}

// fleet answers the fleet table: a dozen plain instant expressions at the
// range end, run concurrently through the shared cache, joined here by
// engine, scored and sorted worst first.
func (p *plan) fleet(ctx context.Context, o models.FleetOptions) (data.Frames, error) {
	lookback := interval.PromDuration(max(p.timeRange.End.Sub(p.timeRange.Start), p.timeRange.Step).Round(time.Second) + p.timeRange.RateInterval)
	sigs := append(p.builder.FleetSignals(p.query.Filters, p.window, lookback), p.builder.FleetStallSignals(p.query.Filters, p.settings.stallWindow)...)
	if r, ok := p.builder.FleetRoleSignal(p.query.Filters); ok {
		sigs = append(sigs, r)
	}
	sigs = append(sigs, p.builder.FleetScrapeSignals(lookback)...)
	sigs = append(sigs, p.builder.FleetContainerSignals(p.query.Filters, p.window, p.settings.container)...)
	if r, ok := p.builder.FleetRejectedSignal(p.query.Filters, p.window); ok {
		sigs = append(sigs, r)
	}
	sigs, ruleNotes := p.fleetOnRules(ctx, sigs)
	vecs, warn, err := p.instants(ctx, sigs)
	if err != nil {
		return nil, err
	}
	if sigs, warn, err = p.fleetEvidence(ctx, vecs, sigs, warn); err != nil {
		return nil, err
	}
	all, predated := p.fleetRows(vecs)
	rows := worstRows(all, o.Worst)
	present := map[string]bool{}
	for name, v := range vecs {
		present[name] = len(v) > 0
	}
	missing := p.signalNotices(ctx, present, []need{
		{key: vllm.Running, tags: []string{vllm.FleetSeen}, without: "the table is empty"},
		{key: vllm.KVUsage, tags: []string{vllm.FleetKVUsage}, without: "the KV-cache column is empty"},
		{key: vllm.Preemptions, tags: []string{vllm.FleetPreemptions}, without: "the preemption column is empty"},
		{key: vllm.QueueTime, tags: []string{vllm.FleetQueueP99}, without: "the queue-time column is empty"},
	}, vllm.KVUsage)
	gpuNotices := attachGPUs(ctx, p, rows, func(r *frames.FleetRow) (string, **frames.GPUSummary) { return r.Instance, &r.GPU })
	return data.Frames{frames.FleetTable(rows, p.executed(exprsOf(sigs)...), p.noticesFor(ruleNotes, warningNotices(warn), missing, predated.notices(), gpuNotices,
		livenessNotices(vecs), p.identityNotices()))}, nil
}

// NoUpText says how the fleet table judges liveness without up.
const NoUpText = "No up series for these engines (a store fed over OpenTelemetry, or remote write, without the scrape series): " +
	"liveness comes from the engines' own samples, so an engine that stops reporting shows stale (no sample for three scrape intervals), " +
	"never down, and flapping scrapes cannot be seen. Send up (the Collector's Prometheus receiver does) to get both back."

// identityNotices says so when an OTLP-fed store has the profile's
// identity labels nowhere and servers are named by instance instead.
func (p *plan) identityNotices() []data.Notice {
	if t := p.builder.Detected.UnresolvedText(); t != "" {
		return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: t + "."}}
	}
	return nil
}

// livenessNotices says so when engines report but up does not.
func livenessNotices(vecs map[string]model.Vector) []data.Notice {
	if len(vecs[vllm.FleetSeen]) == 0 || len(vecs[vllm.FleetUp]) > 0 {
		return nil
	}
	return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: NoUpText}}
}

// worstRows keeps the first k of rows, sorted worst first (0: all).
func worstRows(rows []frames.FleetRow, k int) []frames.FleetRow {
	if k > 0 && len(rows) > k {
		return rows[:k]
	}
	return rows
}

// instants runs instant expressions concurrently at the range end.
func (p *plan) instants(ctx context.Context, sigs []vllm.SignalExpr) (map[string]model.Vector, []string, error) {
	answers, warn, err := concurrently(sigs, func(s vllm.SignalExpr) (model.Vector, []string, error) {
		return p.memo.instantQuery(ctx, s.Expr, p.timeRange.End, p.timeRange.Step)
	})
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]model.Vector, len(sigs))
	for i, v := range answers {
		out[sigs[i].Name] = v
	}
	return out, warn, nil
}

// engineKey identifies one engine across the fleet expressions.
type engineKey struct{ instance, engine, model string }

func (p *plan) keyOf(m model.Metric) engineKey {
	return engineKey{p.serverOf(m), string(m["engine"]), string(m["model_name"])}
}

// serverOf names the vLLM server of a series by its identity labels
// (namespace/pod on Kubernetes, where pod names repeat across namespaces).
func (p *plan) serverOf(m model.Metric) string {
	ls := map[string]string{}
	for _, l := range p.builder.IdentityLabels() {
		ls[l] = string(m[model.LabelName(l)])
	}
	return p.builder.InstanceOf(ls)
}

// fleetRows joins the answers by engine. The engines are those seen in
// the range; their state comes from up, the last sample's age and which
// signals they export; the families their vLLM predates are collected
// for the notices.
func (p *plan) fleetRows(vecs map[string]model.Vector) ([]frames.FleetRow, *fleetPredated) {
	values := map[string]map[engineKey]float64{}
	for name, v := range vecs {
		values[name] = map[engineKey]float64{}
		for _, s := range v {
			values[name][p.keyOf(s.Metric)] = float64(s.Value)
		}
	}
	scrapes := p.serverScrapes(vecs)
	throttled, memShare := p.perServer(vecs[vllm.FleetCPUThrottled]), p.perServer(vecs[vllm.FleetMemoryOfLimit])
	gens := p.generations(vecs[vllm.FleetGeneration])
	roles := p.roles(vecs[vllm.FleetRole])
	evidence, predated := p.evidence(vecs[vllm.FleetEvidence]), newFleetPredated()
	rows := make([]frames.FleetRow, 0, len(values[vllm.FleetSeen]))
	for k := range values[vllm.FleetSeen] {
		r := frames.FleetRow{Instance: k.instance, Engine: k.engine, Model: k.model, Generation: gens[k], Role: roles[k]}
		if r.Generation == "" {
			r.Generation = generationByLabels(k)
		}
		get := func(name string) *float64 {
			v, ok := values[name][k]
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil
			}
			return &v
		}
		r.Running, r.Waiting, r.KVUsage = get(vllm.FleetRunning), get(vllm.FleetWaiting), get(vllm.FleetKVUsage)
		r.PreemptionsPerMin, r.QueueP99, r.TTFTP99 = get(vllm.FleetPreemptions), get(vllm.FleetQueueP99), get(vllm.FleetTTFTP99)
		r.RequestsPerSec, r.GenTokensPerSec = get(vllm.FleetRequests), get(vllm.FleetGenTokens)
		r.PrefixHitRate = get(vllm.FleetPrefixHitRate)
		r.CPUThrottled, r.MemoryOfLimit = throttled[k.instance], memShare[k.instance]
		if v, ok := values[vllm.FleetRejected][engineKey{k.instance, "", k.model}]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			r.RejectedPerSec = &v // the server's rate (no engine label), on each of its engines
		}
		if f := get(vllm.FleetFailed); f != nil && r.RequestsPerSec != nil && *r.RequestsPerSec > 0 {
			share := *f / *r.RequestsPerSec
			r.FailedShare = &share
		}
		sc := scrapes[k.instance]
		r.ScrapeSeconds, r.ScrapeTimeoutShare = sc.seconds, sc.timeoutShare()
		var pre map[string]string
		r.State, r.Missing, pre = p.engineState(k, r.Generation, values, evidence[k], sc)
		predated.add(k.instance, k.engine, r.Generation, pre)
		r.Score = fleetScore(r)
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Score != rows[j].Score {
			return rows[i].Score > rows[j].Score
		}
		a, b := rows[i], rows[j]
		return a.Instance+"\x00"+a.Engine+"\x00"+a.Model < b.Instance+"\x00"+b.Engine+"\x00"+b.Model
	})
	return rows, predated
}

// perServer reads a per-server answer (the container columns) by server.
func (p *plan) perServer(v model.Vector) map[string]*float64 {
	out := map[string]*float64{}
	for _, s := range v {
		if x := float64(s.Value); !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[p.serverOf(s.Metric)] = &x
		}
	}
	return out
}

// engineState: down when its target's scrape fails (up is 0); stale when
// its last sample is older than three scrape intervals (or gone); sleeping
// when its sleep state is not awake; stalled when it held requests
// throughout the stall window without progress; flapping when its
// server's scrape failed between successes in the range; missing metrics
// when it is up but lacks a checked signal its generation's release
// should export (listed); a checked signal its vLLM predates (returned
// with the release that added it) leaves it up.
func (p *plan) engineState(k engineKey, gen string, values map[string]map[engineKey]float64, evidence map[string]bool,
	sc serverScrape) (string, string, map[string]string) {
	if sc.up != nil && *sc.up == 0 {
		return StateDown, "", nil
	}
	last, ok := values[vllm.FleetLastSample][k]
	staleAfter := 3 * max(p.settings.scrape, time.Second)
	if !ok || p.timeRange.End.Sub(time.Unix(0, int64(last*1e9))) > staleAfter {
		return StateStale, "", nil
	}
	if v, ok := values[vllm.FleetSleeping][k]; ok && v == 1 {
		return StateSleeping, "", nil
	}
	if _, ok := values[vllm.FleetStalled][k]; ok {
		return StateStalled, "", nil
	}
	if sc.flapping() {
		return StateFlapping, "", nil
	}
	missing, predated := splitMissing(gen, k, values, evidence)
	if len(missing) > 0 {
		return StateMissing, strings.Join(missing, ", "), predated
	}
	return StateUp, "", predated
}

// generations reads each engine's generation from the marker names it
// exports: V1, V0, or mixed when it exports both.
func (p *plan) generations(v model.Vector) map[engineKey]string {
	seen := map[engineKey]map[vllm.Generation]bool{}
	for _, s := range v {
		k := p.keyOf(s.Metric)
		if seen[k] == nil {
			seen[k] = map[vllm.Generation]bool{}
		}
		seen[k][vllm.MarkerGeneration(string(s.Metric[model.MetricNameLabel]), p.builder.PrefixList()...)] = true
	}
	out := map[engineKey]string{}
	for k, g := range seen {
		switch {
		case g[vllm.GenV1] && g[vllm.GenV0]:
			out[k] = string(vllm.GenMixed)
		case g[vllm.GenV1]:
			out[k] = string(vllm.GenV1)
		case g[vllm.GenV0]:
			out[k] = string(vllm.GenV0)
		}
	}
	return out
}

// generationByLabels is the fallback without marker names: only V1 labels
// its series with engine.
func generationByLabels(k engineKey) string {
	if k.engine != "" {
		return string(vllm.GenV1)
	}
	return "unknown"
}

// fleetScore orders the fleet table worst first (docs/queries.md, fleet):
// a state weight (down 1000, stalled 900, stale 800, flapping 700, missing
// metrics 500), plus
// 100 × the error+abort share, plus preemptions per minute (at most 100),
// plus 10 × waiting per running request (at most 100), plus 10 × KV-cache
// usage, plus the queue-time p99 in seconds (at most 100), plus 10 × the
// server's rejections per second (at most 100).
func fleetScore(r frames.FleetRow) float64 {
	v := func(f *float64) float64 {
		if f == nil {
			return 0
		}
		return *f
	}
	s := stateWeight[r.State]
	s += 100 * v(r.FailedShare)
	s += math.Min(v(r.PreemptionsPerMin), 100)
	s += math.Min(10*v(r.Waiting)/math.Max(v(r.Running), 1), 100)
	s += 10 * v(r.KVUsage)
	s += math.Min(v(r.QueueP99), 100)
	s += math.Min(10*v(r.RejectedPerSec), 100)
	return math.Round(s*1000) / 1000
}
