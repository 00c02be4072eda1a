package query_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// overlapProm is ruleProm whose shared-identity probes (the two p99s', the
// stall state's) each wait, up to five seconds, for the others to arrive: it
// records how many were in flight at once and how often each was asked.
type overlapProm struct {
	*ruleProm
	mu       sync.Mutex
	inFlight int
	most     int
	asked    map[string]int
	all      chan struct{}
	want     int
}

func isSharedProbe(expr string) bool {
	return strings.HasPrefix(expr, "count(count by") || strings.Contains(expr, "up|engine:vllm_stalled:")
}

func (p *overlapProm) Query(ctx context.Context, expr string, ts time.Time) (model.Vector, []string, error) {
	if !isSharedProbe(expr) {
		return p.ruleProm.Query(ctx, expr, ts)
	}
	p.mu.Lock()
	p.asked[expr]++
	p.inFlight++
	p.most = max(p.most, p.inFlight)
	if p.most == p.want {
		close(p.all)
	}
	p.mu.Unlock()
	select {
	case <-p.all:
	case <-time.After(5 * time.Second): // serial probes: each waits this out alone
	}
	p.mu.Lock()
	p.inFlight--
	p.mu.Unlock()
	return p.ruleProm.Query(ctx, expr, ts)
}

// TestFleetProbesOverlap: the fleet table on rules asks its three
// shared-identity probes at once and each once, not one after another
// (each reads every engine's recorded series: serially they added their
// sum to the table's wait), and its answer is the one the probes decide.
func TestFleetProbesOverlap(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, shared := range []bool{false, true} {
		fp := &overlapProm{ruleProm: &ruleProm{since: now.Add(-2 * time.Hour), shared: shared},
			asked: map[string]int{}, all: make(chan struct{}), want: 3}
		s, err := models.ParseSettings(models.Instance{URL: "http://prom:9090", JSONData: []byte(`{}`)})
		require.NoError(t, err)
		e := &query.Executor{Prom: fp, Settings: s, Detector: query.NewDetector(fp, s.MetricPrefix, func() time.Time { return now }),
			Now: func() time.Time { return now }}
		q := dq("A", `{"queryType":"fleet"}`, now.Add(-time.Hour), now)
		q.Interval = 30 * time.Second
		r := run(t, e, q).Responses["A"]
		require.NoError(t, r.Error)
		require.Equal(t, 3, fp.most, "the three probes in flight at once")
		require.Len(t, fp.asked, 3)
		for expr, n := range fp.asked {
			require.Equal(t, 1, n, "asked once: %s", expr)
		}
		exprs := r.Frames[0].Meta.ExecutedQueryString
		require.Equal(t, !shared, strings.Contains(exprs, "engine:vllm_stalled:3m > 0"), "the stall state where no identity is shared")
		require.Equal(t, !shared, strings.Contains(exprs, ":p99_rate1m"), "the recorded p99s where no engine's labels are shared")
	}
}
