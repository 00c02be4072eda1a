package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// The fleet table's versions that predate a family: an engine whose vLLM
// never exported a checked family is up with the cell empty, and a notice
// names the release that added the family (vllm.Predates decides it from
// what the engine exports).

// predatedKey is one family one generation added in one release.
type predatedKey struct{ signal, gen, release string }

// fleetPredated collects, per family a generation added in a release, the
// servers whose engines predate it, and the V1 servers without an engine
// label (before 0.8.3).
type fleetPredated struct {
	families map[predatedKey]map[string]bool
	noEngine map[string]bool
}

func newFleetPredated() *fleetPredated {
	return &fleetPredated{families: map[predatedKey]map[string]bool{}, noEngine: map[string]bool{}}
}

// fleetEvidence asks for the version evidence (into vecs, its expression
// appended to sigs) only when some engine lacks a checked signal: a
// healthy fleet, however large, pays nothing for it.
func (p *plan) fleetEvidence(ctx context.Context, vecs map[string]model.Vector, sigs []vllm.SignalExpr,
	warn []string) ([]vllm.SignalExpr, []string, error) {
	if !anyLacking(p, vecs) {
		return sigs, warn, nil
	}
	ev := p.builder.FleetEvidenceSignal(p.query.Filters)
	got, more, err := p.instants(ctx, []vllm.SignalExpr{ev})
	if err != nil {
		return nil, nil, err
	}
	vecs[ev.Name] = got[ev.Name]
	return append(sigs, ev), append(warn, more...), nil
}

// anyLacking reports whether an engine seen in the range lacks a checked
// signal.
func anyLacking(p *plan, vecs map[string]model.Vector) bool {
	has := map[string]map[engineKey]bool{}
	for _, name := range fleetChecked {
		has[name] = map[engineKey]bool{}
		for _, s := range vecs[name] {
			has[name][p.keyOf(s.Metric)] = true
		}
	}
	for _, s := range vecs[vllm.FleetSeen] {
		k := p.keyOf(s.Metric)
		for _, name := range fleetChecked {
			if !has[name][k] {
				return true
			}
		}
	}
	return false
}

// evidence reads, per engine, the evidence series names it exports.
func (p *plan) evidence(v model.Vector) map[engineKey]map[string]bool {
	out := map[engineKey]map[string]bool{}
	for _, s := range v {
		k := p.keyOf(s.Metric)
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		out[k][vllm.EvidenceName(string(s.Metric[model.MetricNameLabel]), p.builder.PrefixList()...)] = true
	}
	return out
}

// splitMissing splits the checked signals engine k lacks into those its
// generation should export (missing) and those its vLLM predates, with
// the release that added each.
func splitMissing(gen string, k engineKey, values map[string]map[engineKey]float64, evidence map[string]bool) ([]string, map[string]string) {
	exported := map[string]bool{}
	for n := range evidence {
		exported[n] = true
	}
	if k.engine != "" {
		exported[vllm.EngineLabelEvidence] = true
	}
	for _, name := range fleetChecked {
		if _, ok := values[name][k]; ok {
			exported[name] = true
		}
	}
	var missing []string
	predated := map[string]string{}
	for _, name := range fleetChecked {
		if exported[name] {
			continue
		}
		if rel, ok := vllm.Predates(vllm.Generation(gen), name, exported); ok {
			predated[name] = rel
		} else {
			missing = append(missing, name)
		}
	}
	return missing, predated
}

// add records the families row's engine predates, and a V1 engine without
// an engine label.
func (f *fleetPredated) add(instance, engine, gen string, predated map[string]string) {
	for sig, rel := range predated {
		k := predatedKey{sig, gen, rel}
		if f.families[k] == nil {
			f.families[k] = map[string]bool{}
		}
		f.families[k][instance] = true
	}
	if gen == string(vllm.GenV1) && engine == "" {
		f.noEngine[instance] = true
	}
}

// notices says, per family, which servers' vLLM predates it and the
// release that added it: their cells are empty and they are up.
func (f *fleetPredated) notices() []data.Notice {
	var out []data.Notice
	for k, servers := range f.families {
		out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
			"The %q column is empty for engines whose vLLM predates vllm:%s (added in %s %s): %s. They are up, not missing metrics.",
			frames.FleetColumnOf(k.signal), vllm.FleetFamily(k.signal), k.gen, k.release, joinSorted(servers))})
	}
	if len(f.noEngine) > 0 {
		out = append(out, data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
			"The \"engine\" column is empty for V1 servers whose vLLM predates the engine label (added in V1 %s): %s.",
			vllm.V1EngineLabelSince, joinSorted(f.noEngine))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Text < out[j].Text })
	return out
}

// joinSorted lists a set's members in order.
func joinSorted(set map[string]bool) string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
