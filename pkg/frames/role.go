package frames

import "github.com/grafana/grafana-plugin-sdk-go/data"

// SaturationByRole makes a verdict table built by SaturationTable a table
// of role pools (a saturation query grouped by role): its first column,
// the instance, becomes the pool's role, one per row in the rows' order.
// A pool is what a disaggregated fleet scales, prefill and decode apart.
func SaturationByRole(table *data.Frame, roles []string) {
	if len(table.Fields) == 0 || table.Fields[0].Name != "instance" || table.Fields[0].Len() != len(roles) {
		return
	}
	table.Fields[0] = data.NewField("role", nil, append([]string(nil), roles...))
}
