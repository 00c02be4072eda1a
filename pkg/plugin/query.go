package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// QueryData answers each query on its own: one bad query never fails the
// others in the same request.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	if d.settingsErr != nil {
		resp := backend.NewQueryDataResponse()
		for _, q := range req.Queries {
			resp.Responses[q.RefID] = backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream, d.settingsErr.Error())
		}
		return resp, nil
	}
	return d.executor.QueryData(ctx, req), nil
}
