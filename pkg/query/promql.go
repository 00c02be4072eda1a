package query

import (
	"context"
	"fmt"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
)

// promql runs the user's expression with Grafana's step math and built-in
// variables resolved. Prometheus rejecting it is the user's error, so it
// is reported as invalid input rather than as our bug.
func (p *plan) promql(ctx context.Context, o models.PromQLOptions) (data.Frames, error) {
	expr := interval.Interpolate(o.Expr, p.timeRange)
	if p.alert {
		if name, ok := interval.HasUnresolvedVariable(expr); ok {
			return nil, fmt.Errorf("%w: expr holds %s, which Grafana does not replace in alert rules", ErrUnresolvedVariable, name)
		}
	}
	expr, err := p.builder.ScopeExpr(expr, p.query.Labels)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", models.ErrInvalidQuery, err)
	}
	f, _, err := p.series(ctx, expr, frames.SeriesOptions{Unit: o.Unit})
	if prom.KindOf(err) == prom.KindBadQuery {
		return nil, fmt.Errorf("%w: Prometheus rejected the expression: %v", models.ErrInvalidQuery, err.Error())
	}
	return f, err
}
