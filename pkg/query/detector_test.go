package query_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// namesProm answers metric-name lookups and remembers each one's range;
// the cAdvisor probe's lookups (their selector names cAdvisor's working
// set) and the role probe's (a role label set) are counted apart.
type namesProm struct {
	asked      [][2]time.Time
	probes     int
	roleProbes int
	fail       bool
}

func (p *namesProm) Query(context.Context, string, time.Time) (model.Vector, []string, error) {
	return nil, nil, nil
}

func (p *namesProm) QueryRange(context.Context, string, v1.Range) (prom.Matrix, []string, error) {
	return nil, nil, nil
}

func (p *namesProm) MetricNames(_ context.Context, sel string, start, end time.Time) ([]string, error) {
	if strings.Contains(sel, "container_memory_working_set_bytes") {
		p.probes++
		return nil, nil
	}
	if strings.Contains(sel, `_role!=""`) {
		p.roleProbes++
		return nil, nil
	}
	p.asked = append(p.asked, [2]time.Time{start, end})
	if p.fail {
		return nil, errors.New("down")
	}
	return []string{"vllm:kv_cache_usage_perc"}, nil
}

// TestDetectorCachesForTTL: names are looked up over the last hour, trusted
// for DetectionTTL and looked up again once it has passed; a failed lookup
// is not cached, and Invalidate forgets the cache.
func TestDetectorCachesForTTL(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := t0
	p := &namesProm{}
	d := query.NewDetector(p, "vllm:", func() time.Time { return now })
	ctx := context.Background()

	require.True(t, d.Get(ctx).Has("kv_cache_usage_perc"))
	require.Equal(t, [][2]time.Time{{t0.Add(-time.Hour), t0}}, p.asked, "one lookup over the last hour")

	now = t0.Add(query.DetectionTTL - time.Nanosecond)
	require.True(t, d.Get(ctx).Found())
	require.Len(t, p.asked, 1, "still fresh")

	now = t0.Add(query.DetectionTTL)
	require.True(t, d.Get(ctx).Found())
	require.Len(t, p.asked, 2, "stale after DetectionTTL")

	d.Invalidate()
	require.True(t, d.Get(ctx).Found())
	require.Len(t, p.asked, 3, "Invalidate forgets")
	require.Equal(t, 3, p.probes, "the cAdvisor probe runs once per refresh")
	require.Equal(t, 6, p.roleProbes, "the role probe runs once per refresh, per role label (none found)")

	p.fail = true
	d.Invalidate()
	require.False(t, d.Get(ctx).Found(), "a failed lookup answers an empty detection")
	require.False(t, d.Get(ctx).Found())
	require.Len(t, p.asked, 5, "and is not cached: each query tries again")
	require.Equal(t, 3, p.probes, "no probe after a failed lookup")
	require.Equal(t, 6, p.roleProbes, "no role probe after a failed lookup")
}
