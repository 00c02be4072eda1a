package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSleepModeOperationMetrics: a 0.32 instance has no sleep-mode families
// until its first sleep-mode call (vLLM creates the collectors then); after
// it, one duration series per operation called, no model_name or engine
// label, the catalogue's buckets, and an in-flight gauge for all three
// operations at 0. The reference profile never has them.
func TestSleepModeOperationMetrics(t *testing.T) {
	cat := loadCatalogue(t)
	tests := []struct {
		name      string
		release   string
		engines   int
		levels    []int // SetSleep calls in order
		wantCount map[string]uint64
	}{
		{"0.32, no call yet", Release032, 1, nil, nil},
		{"0.32, sleep then wake", Release032, 1, []int{1, 0}, map[string]uint64{"sleep": 1, "wake": 1}},
		{"0.32 data parallel, two sleeps", Release032, 2, []int{1, 2}, map[string]uint64{"sleep": 2}},
		{"reference profile", "", 1, []int{1, 0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, nil, InstanceConfig{Model: "m", Engines: tt.engines, Release: tt.release})
			require.NoError(t, f.Advance(time.Minute))
			for _, level := range tt.levels {
				require.NoError(t, f.SetSleep(0, level))
			}
			got := scrape(t, f, 0)
			if tt.wantCount == nil {
				require.NotContains(t, got.text, "sleep_mode_operation", "no collectors before the first call")
				return
			}
			dur := got.families[sleepOpDurationName]
			require.NotNil(t, dur)
			counts := map[string]uint64{}
			for _, sv := range dur.series {
				counts[sv.labels["operation"]] = sv.count
				require.Equal(t, sv.count, sv.buckets[0], "the simulator's calls take no time: all in le=0.01")
			}
			require.Equal(t, tt.wantCount, counts)
			inFlight := map[string]float64{}
			for _, sv := range got.families[sleepOpInFlightName].series {
				inFlight[sv.labels["operation"]] = sv.value
			}
			require.Equal(t, map[string]float64{"sleep": 0, "release_kv_cache_memory": 0, "wake": 0}, inFlight)
			for _, name := range []string{sleepOpDurationName, sleepOpInFlightName} {
				checkFamily(t, cat[name], got.families[name], V1, tt.engines, false)
			}
		})
	}
}
