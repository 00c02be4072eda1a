package plugin_test

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardsLeadWithDiagnosis checks the layout issue 13 asks for: the
// fleet overview opens with the fleet table and the saturation verdicts,
// the engine drill-down with the instance's verdict and its evidence.
// (TestDashboardsAgainstFleet proves every one of these panels returns data.)
func TestDashboardsLeadWithDiagnosis(t *testing.T) {
	tests := []struct {
		file string
		// first are the query types of the panels at the top, in reading order.
		first []string
	}{
		{"fleet-overview.json", []string{"fleet", "saturation", "saturation"}},
		{"engine-drilldown.json", []string{"saturation", "saturation"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(root(t, "dashboards", tt.file))
			require.NoError(t, err)
			var d struct {
				Panels []struct {
					GridPos struct{ X, Y int } `json:"gridPos"`
					Targets []struct {
						QueryType string `json:"queryType"`
					} `json:"targets"`
				} `json:"panels"`
			}
			require.NoError(t, json.Unmarshal(raw, &d))
			panels := d.Panels
			sort.SliceStable(panels, func(i, j int) bool {
				if panels[i].GridPos.Y != panels[j].GridPos.Y {
					return panels[i].GridPos.Y < panels[j].GridPos.Y
				}
				return panels[i].GridPos.X < panels[j].GridPos.X
			})
			require.GreaterOrEqual(t, len(panels), len(tt.first))
			for i, want := range tt.first {
				require.NotEmpty(t, panels[i].Targets)
				require.Equal(t, want, panels[i].Targets[0].QueryType, "panel %d from the top", i)
			}
		})
	}
}
