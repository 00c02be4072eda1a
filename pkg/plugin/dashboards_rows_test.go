package plugin_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// familyRow is what one collapsed row at the bottom of the fleet overview
// and the engine drill-down must hold (issue 21): the vLLM flag its
// description names and the queries its panels make.
type familyRow struct {
	title string
	flag  string
	// queries are "queryType" or "queryType/view-or-format-or-grouping"
	// that some panel of the row must send.
	queries []string
}

var familyRows = []familyRow{
	{"Prefix cache", "--no-enable-prefix-caching", []string{"prefixCache"}},
	{"Speculative decoding", "--speculative-config", []string{"specDecode"}},
	{"LoRA adapters", "--enable-lora", []string{"lora/table", "lora/series"}},
	{"Prefill/decode and KV transfer", "--kv-transfer-config", []string{"kvTransfer"}},
	{"Workload shape", "no flag", []string{"workload/prompt", "workload/generation", "workload/tokens"}},
	{"Latency distributions", "no flag", []string{"waitTime/heatmap"}},
	{"Containers", "cAdvisor", []string{"container/table", "container/series"}},
}

// target is the part of a panel query the layout checks read.
type target struct {
	QueryType string   `json:"queryType"`
	View      string   `json:"view"`
	Format    string   `json:"format"`
	Grouping  string   `json:"grouping"`
	Objective string   `json:"objective"`
	Signals   []string `json:"signals"`
}

func targets(t *testing.T, p panel) []target {
	out := make([]target, len(p.Targets))
	for i, raw := range p.Targets {
		require.NoError(t, json.Unmarshal(raw, &out[i]), p.Title)
	}
	return out
}

// TestDashboardFamilyRows checks that the fleet overview and the engine
// drill-down end in one collapsed row per signal family, in order, each
// naming the vLLM flag that turns the family on and holding its queries;
// the fleet overview also splits queue and wait by role. Heatmaps read
// the plugin's pre-bucketed frames (calculate off).
func TestDashboardFamilyRows(t *testing.T) {
	for _, file := range []string{"fleet-overview.json", "engine-drilldown.json"} {
		t.Run(file, func(t *testing.T) {
			d := readDashboard(t, file)
			require.Greater(t, len(d.Panels), len(familyRows))
			rows := d.Panels[len(d.Panels)-len(familyRows):]
			for i, want := range familyRows {
				r := rows[i]
				require.Equal(t, "row", r.Type, "panel %d from the bottom", len(familyRows)-i)
				require.Equal(t, want.title, r.Title)
				require.True(t, r.Collapsed, "%s: collapsed, as a fleet without the family shows only notices", r.Title)
				require.Contains(t, r.Description, want.flag, r.Title)
				require.NotEmpty(t, r.Panels, r.Title)
				var sent []string
				for _, p := range r.Panels {
					for _, tg := range targets(t, p) {
						sent = append(sent, tg.QueryType, tg.QueryType+"/"+tg.View, tg.QueryType+"/"+tg.Format, tg.QueryType+"/"+tg.Grouping)
					}
					checkHeatmapOptions(t, p)
				}
				for _, q := range want.queries {
					require.Contains(t, sent, q, r.Title)
				}
			}
			if file == "fleet-overview.json" {
				pd := rows[3].Panels
				var sent []string
				for _, p := range pd {
					for _, tg := range targets(t, p) {
						sent = append(sent, tg.QueryType+"/"+tg.Grouping)
					}
				}
				require.Subset(t, sent, []string{"queue/role", "waitTime/role", "kvTransfer/role"})
			}
		})
	}
}

// checkHeatmapOptions: a heatmap panel shows a workload length or a
// latency distribution as the plugin buckets it, with the bucket names (upper
// bounds) as its y axis.
func checkHeatmapOptions(t *testing.T, p panel) {
	if p.Type != "heatmap" {
		return
	}
	var o struct {
		Calculate *bool `json:"calculate"`
		RowsFrame struct {
			Layout string `json:"layout"`
		} `json:"rowsFrame"`
	}
	require.NoError(t, json.Unmarshal(p.Options, &o), p.Title)
	require.NotNil(t, o.Calculate, p.Title)
	require.False(t, *o.Calculate, "%s: the plugin sends heatmap-rows frames", p.Title)
	require.Equal(t, "le", o.RowsFrame.Layout, "%s: bucket names are upper bounds", p.Title)
	for _, tg := range targets(t, p) {
		if tg.QueryType == "waitTime" {
			require.Equal(t, "heatmap", tg.Format, "%s: a heatmap panel asks for heatmap-rows", p.Title)
		} else {
			require.Equal(t, "workload", tg.QueryType, p.Title)
			require.Contains(t, []string{"prompt", "generation"}, tg.View, p.Title)
		}
		require.Equal(t, "none", tg.Grouping, "%s: one frame, one heatmap", p.Title)
	}
}

// TestDashboardSLOAvailability checks that the SLO dashboard shows the
// availability objective: attainment, budget left and the burn-rate pairs
// of the alerts.
func TestDashboardSLOAvailability(t *testing.T) {
	d := readDashboard(t, "latency-slo.json")
	var signals []string
	for _, p := range d.queryPanels() {
		for _, tg := range targets(t, p) {
			if tg.QueryType == "slo" && tg.Objective == "availability" {
				signals = append(signals, tg.Signals...)
			}
		}
	}
	require.Subset(t, signals, []string{"attainment", "error_budget_left", "burn_1h_5m", "burn_6h_30m", "burn_1d_2h", "burn_3d_6h"})
}

// TestDashboardLayout checks ids and grid positions of every dashboard:
// ids unique (rows and the panels inside collapsed rows included), panels
// inside the 24-column grid, top-level panels not overlapping, rows full
// width, and a collapsed row's panels placed below it.
func TestDashboardLayout(t *testing.T) {
	for path, d := range loadDashboards(t) {
		t.Run(path, func(t *testing.T) {
			var ids []int
			for _, p := range d.Panels {
				ids = append(ids, p.ID)
				checkGrid(t, p)
				if p.Type == "row" {
					require.Equal(t, gridPos{X: 0, Y: p.GridPos.Y, W: 24, H: 1}, p.GridPos, p.Title)
					require.True(t, p.Collapsed || len(p.Panels) == 0, "%s: an open row holds no panels", p.Title)
					require.Empty(t, p.Targets, p.Title)
				}
				for _, c := range p.Panels {
					ids = append(ids, c.ID)
					checkGrid(t, c)
					require.Greater(t, c.GridPos.Y, p.GridPos.Y, "%s in row %s", c.Title, p.Title)
				}
			}
			sorted := slices.Clone(ids)
			slices.Sort(sorted)
			require.Equal(t, slices.Compact(slices.Clone(sorted)), sorted, "panel ids are unique")
			for i, a := range d.Panels {
				for _, b := range d.Panels[i+1:] {
					require.False(t, overlap(a.GridPos, b.GridPos), "%q and %q overlap", a.Title, b.Title)
				}
			}
		})
	}
}

func checkGrid(t *testing.T, p panel) {
	g := p.GridPos
	require.True(t, g.W > 0 && g.H > 0 && g.X >= 0 && g.Y >= 0 && g.X+g.W <= 24, "%s: gridPos %+v", p.Title, g)
}

func overlap(a, b gridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func readDashboard(t *testing.T, file string) dashboard {
	raw, err := os.ReadFile(root(t, "dashboards", file))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}
