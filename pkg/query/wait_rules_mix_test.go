package query

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWaitQuantilesNotBeforeTheirGroup: a range that starts before the
// rules ran reads raw series up to their first evaluation and the bucket
// rates from then on (rulemix.go), never a recorded quantile or mean that
// did not exist at the range's start (the group may have been loaded
// later than the latency groups, whose start the split follows).
func TestWaitQuantilesNotBeforeTheirGroup(t *testing.T) {
	now := time.Unix(1_800_000_000, 0) // 08:00:00 UTC, on the 30s grid
	fp := &mixProm{first: now.Add(-30*time.Minute + 7*time.Second)}
	r := mixRun(t, mixExecutor(t, fp, now), `{"queryType":"waitTime","grouping":"instance"}`, now.Add(-time.Hour), now)
	asked := fp.asked()
	require.Contains(t, asked, "histogram_quantile(0.5, sum by (le, instance) (rate(vllm:request_queue_time_seconds_bucket[60s])))")
	require.Contains(t, asked, "histogram_quantile(0.5, sum by (le, instance) (engine:vllm_request_queue_time_seconds_bucket:rate1m))")
	require.NotContains(t, asked, ":server_")
	require.True(t, strings.Contains(noticeTextsOf(r.Frames), "Answered from recording rules from 07:30:30 UTC on"), noticeTextsOf(r.Frames))
}
