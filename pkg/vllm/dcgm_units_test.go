package vllm

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// taggedParts parses an or-union of tag()ged expressions into the inner
// expression of each part, by its SignalTagLabel value.
func taggedParts(t *testing.T, expr string) map[string]parser.Expr {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	require.NoError(t, err, "generated PromQL must parse: %s", expr)
	out := map[string]parser.Expr{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		call, ok := n.(*parser.Call)
		if !ok || call.Func.Name != "label_replace" {
			return nil
		}
		require.Equal(t, SignalTagLabel, call.Args[1].(*parser.StringLiteral).Val)
		out[call.Args[2].(*parser.StringLiteral).Val] = unparen(call.Args[0])
		return nil
	})
	return out
}

// DCGMSeries turns dcgm-exporter's units into the frames' (MiB to bytes,
// MHz to Hz): exactly the scaled readings are multiplied by their factor,
// the others are the exporter's series as they are, and the framebuffer
// total is (used + free + reserved) in bytes.
func TestDCGMSeriesUnits(t *testing.T) {
	parts := taggedParts(t, Builder{}.DCGMSeries())
	require.Len(t, parts, len(DCGMReadings)+1)
	for _, r := range DCGMReadings {
		e := parts[r.Key]
		require.NotNil(t, e, r.Key)
		if r.Scale == 1 {
			vs, ok := e.(*parser.VectorSelector)
			require.True(t, ok, "%s is read as exported: %s", r.Key, e)
			require.Equal(t, r.Metric, vs.Name)
			continue
		}
		bin, ok := e.(*parser.BinaryExpr)
		require.True(t, ok, "%s must be scaled: %s", r.Key, e)
		require.Equal(t, parser.ItemType(parser.MUL), bin.Op)
		require.Equal(t, r.Metric, bin.LHS.(*parser.VectorSelector).Name)
		require.Equal(t, r.Scale, bin.RHS.(*parser.NumberLiteral).Val)
	}
	want := map[string]float64{DCGMFBUsed: 1 << 20, DCGMFBFree: 1 << 20, DCGMFBReserved: 1 << 20, DCGMSMClock: 1e6, DCGMUtil: 1}
	for _, r := range DCGMReadings {
		if w, ok := want[r.Key]; ok {
			require.Equal(t, w, r.Scale, "%s: dcgm-exporter reports MiB and MHz", r.Key)
		}
	}
	require.Equal(t, "(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE + DCGM_FI_DEV_FB_RESERVED) * 1048576", parts[DCGMFBTotal].String())
}
