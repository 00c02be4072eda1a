package query_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// flakyLe lists le values, or fails while err is set.
type flakyLe struct {
	*withLe
	err error
}

func (f *flakyLe) LabelValues(ctx context.Context, label, selector string, start, end time.Time) ([]string, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.withLe.LabelValues(ctx, label, selector, start, end)
}

// TestDetectorBoundsCache: bounds are cached per selector for
// DetectionTTL, forgotten by Invalidate, and a failed lookup answers with
// vLLM's defaults without caching them.
func TestDetectorBoundsCache(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := &flakyLe{withLe: &withLe{scripted: &scripted{}, les: []string{"0.5", "2.0", "+Inf"}}}
	d := query.NewDetector(p, "vllm:", func() time.Time { return now })
	from, to := now.Add(-time.Hour), now // one dashboard range throughout
	get := func(sel string) vllm.Bounds {
		return d.Bounds(context.Background(), vllm.TTFT, sel, from, to)
	}
	p.err = errors.New("down")
	require.True(t, get("{a}").Default, "a failed lookup falls back to the defaults")
	p.err = nil
	require.Equal(t, []float64{0.5, 2}, get("{a}").Values, "and is not cached")
	require.Len(t, p.lookups, 1)
	get("{a}")
	require.Len(t, p.lookups, 1, "cached")
	get("{b}")
	require.Len(t, p.lookups, 2, "per selector")
	now = now.Add(query.DetectionTTL)
	get("{a}")
	require.Len(t, p.lookups, 3, "stale after DetectionTTL")
	d.Invalidate()
	get("{a}")
	require.Len(t, p.lookups, 4, "forgotten by Invalidate")
}
