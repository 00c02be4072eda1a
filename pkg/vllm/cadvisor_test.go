package vllm

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestContainerNamesSelector: the probe lists the two cAdvisor families
// the container columns need, inside the data source's scope, with a
// selector Prometheus parses.
func TestContainerNamesSelector(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Scope: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "cluster", "eu")}}
	sel := b.ContainerNamesSelector()
	require.Equal(t, `{__name__=~"container_cpu_cfs_throttled_periods_total|container_memory_working_set_bytes", cluster="eu"}`, sel)
	ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector(sel)
	require.NoError(t, err)
	require.Len(t, ms, 2)
}

// TestContainerColumnsByProbe: a container column (fleet table) and the
// saturation throttling expression are built unless the probe answered
// without their cAdvisor family; names outside the probe's families (a
// store that ignores match[]) change nothing, and a later name detection
// keeps the probe's answer.
func TestContainerColumnsByProbe(t *testing.T) {
	const ws, thr = "container_memory_working_set_bytes", "container_cpu_cfs_throttled_periods_total"
	tests := []struct {
		name      string
		det       Detection
		wantFleet []string
		wantSat   bool
	}{
		{"not probed", Detection{}, []string{FleetCPUThrottled, FleetMemoryOfLimit}, true},
		{"probed, no cAdvisor", Detection{}.WithContainerNames(nil), nil, false},
		{"probed, only other names", Detection{}.WithContainerNames([]string{"vllm:num_requests_running", "container_cpu_usage_seconds_total"}), nil, false},
		{"both families", Detection{}.WithContainerNames([]string{ws, thr}), []string{FleetCPUThrottled, FleetMemoryOfLimit}, true},
		{"working set only", Detection{}.WithContainerNames([]string{ws}), []string{FleetMemoryOfLimit}, false},
		{"throttling only", Detection{}.WithContainerNames([]string{thr}), []string{FleetCPUThrottled}, true},
		{"kept by WithNames", Detection{}.WithContainerNames([]string{ws}).WithNames([]string{"vllm:num_requests_running"}, []string{"vllm:"}),
			[]string{FleetMemoryOfLimit}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Builder{Prefix: "vllm:", InstanceLabel: "instance", Detected: tt.det}
			var got []string
			for _, s := range b.FleetContainerSignals(models.Filters{}, "1m", models.DefaultContainerSettings()) {
				got = append(got, s.Name)
				_, err := parser.NewParser(parser.Options{}).ParseExpr(s.Expr)
				require.NoError(t, err, s.Expr)
			}
			require.Equal(t, tt.wantFleet, got)
			s, ok := b.SaturationThrottleSignal(models.GroupInstance, models.Filters{}, time.Minute, models.DefaultContainerSettings())
			require.Equal(t, tt.wantSat, ok)
			require.Equal(t, tt.wantSat, s.Expr != "")
		})
	}
}
