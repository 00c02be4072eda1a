package query

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

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
