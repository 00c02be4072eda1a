package vllm

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// KnownRoleLabels are the labels serving stacks put an engine's
// prefill/decode role in, as Prometheus stores them: KServe's
// LLMInferenceService PodMonitor sets the target label llm_isvc_role from
// the pod label llm-d.ai/role; llm-d's own charts set only that pod
// label, which reaches the series as llm_d_ai_role when the scrape copies
// pod labels (prometheus-operator podTargetLabels, or a kubernetes_sd
// labelmap of __meta_kubernetes_pod_label_(.+)), both of which replace
// the characters a label name cannot hold with "_".
var KnownRoleLabels = []string{"llm_isvc_role", "llm_d_ai_role"}

// Roles of a disaggregated fleet, as the stacks spell them.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// RoleLabels are the labels grouping by role keeps: the data source's
// roleLabel, else every known one. A series carries at most one of them
// in practice, so grouping by all of them splits by whichever is there
// and keeps series without any as one group, in a single expression.
func (b Builder) RoleLabels() []string {
	if b.RoleLabel != "" {
		return []string{b.RoleLabel}
	}
	return append([]string(nil), KnownRoleLabels...)
}

// RoleOf is the role a series carries: the value of the first of
// RoleLabels it has, "" when it has none.
func (b Builder) RoleOf(ls map[string]string) string {
	for _, l := range b.RoleLabels() {
		if v := ls[l]; v != "" {
			return v
		}
	}
	return ""
}

// NoRoleText is the notice of a role grouping whose series carry no role
// label: the answer is one group, the whole selection.
func (b Builder) NoRoleText() string {
	looked := strings.Join(b.RoleLabels(), ", ")
	hint := "set roleLabel in the data source settings if your stack puts the role in another label"
	if b.RoleLabel != "" {
		hint = "check roleLabel in the data source settings"
	}
	return fmt.Sprintf("no role label on the series: looked for %s, so every engine is shown as one group. "+
		"KServe's LLMInferenceService sets llm_isvc_role; llm-d's pod label llm-d.ai/role arrives as llm_d_ai_role only "+
		"when the scrape copies pod labels (podTargetLabels); %s.", looked, hint)
}

// FleetRole names the fleet table's role expression (SignalExpr.Name).
const FleetRole = "role"

// FleetRoleSignal is one sample per engine carrying its role labels, for
// the fleet table's role column. It is an expression of its own, not a
// label of the others, so that grouping every column by the role labels
// cannot split an engine whose role label changed within the range. ok
// is false where the role probe found no running series with a role
// label (RoleProbeSelectors): the column would be empty, and the
// expression still reads every engine's running series (81 ms of
// Prometheus' evaluation at 10,000 engines, docs/performance.md).
func (b Builder) FleetRoleSignal(f models.Filters) (SignalExpr, bool) {
	if r := b.Detected.Roles; r.Probed && !r.Found {
		return SignalExpr{}, false
	}
	return SignalExpr{FleetRole, agg("group", append(b.EngineLabels(), b.RoleLabels()...), b.union(Running, f, ""))}, true
}

// RoleLabelsFound is what the role probe found. The zero value is "not
// probed": the role column is asked for, as before the probe.
type RoleLabelsFound struct {
	// Probed is true once every probe selector was answered.
	Probed bool
	// Found: some running series in scope carries a role label.
	Found bool
}

// RoleProbeSelectors are the role probe's match[] selectors, one per role
// label (RoleLabels): the running gauge under every accepted name, inside
// the scope, with that label set. Asked for metric names once per
// detection refresh, each is a series-index lookup that finds nothing on
// a fleet without roles. ok is false where a role label is read from
// target_info (an OTLP-fed store), which the series themselves never
// carry: the column is then always asked for.
func (b Builder) RoleProbeSelectors() ([]string, bool) {
	var names []string
	for _, p := range b.prefixes() {
		if s, ok := Lookup(Running); ok {
			for _, n := range s.WireNames(p) {
				names = append(names, regexp.QuoteMeta(n))
			}
		}
	}
	var out []string
	for _, l := range b.RoleLabels() {
		if b.Detected.Join.Joins(l) {
			return nil, false
		}
		ms := append([]string{"__name__=~" + quote(strings.Join(names, "|")), l + `!=""`}, b.scope()...)
		out = append(out, "{"+strings.Join(ms, ", ")+"}")
	}
	return out, true
}

// WithRoles is the detection with the role probe's answer: found when
// any probe selector listed a name.
func (d Detection) WithRoles(found bool) Detection {
	d.Roles = RoleLabelsFound{Probed: true, Found: found}
	return d
}

// RecordedGrouping reports whether the shipped recording rules keep the
// labels of a grouping. They sum by server, model and engine
// (deploy/prometheus/rules/vllm-recording.rules.yml) and keep no role
// label, so a role grouping read from them would silently be one group:
// it is always answered from the raw series.
func RecordedGrouping(g models.Grouping) bool {
	return g != models.GroupRole
}
