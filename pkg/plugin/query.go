package plugin

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferops/vllm-datasource/pkg/failure"
)

// QueryData answers each query on its own: one bad query never fails the
// others in the same request.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	if d.settingsErr != nil {
		resp := allFailed(req, failure.InvalidInput, d.settingsErr.Error())
		d.redact.response(resp)
		return resp, nil
	}
	u := d.userOf(ctx, req.GetHTTPHeaders())
	resp, err := d.queryData(u, req)
	u.redact.response(resp)
	return resp, err
}

func (d *Datasource) queryData(u user, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	ctx, done, ok := d.life.begin(u.ctx)
	defer done()
	if !ok {
		return allFailed(req, failure.Canceled, errDisposed.Error()), nil
	}
	resp := u.scope.executor.QueryData(ctx, req)
	if disposedBy(ctx) {
		// Whatever failed, failed because the instance was replaced: say so
		// rather than "context canceled".
		for ref, r := range resp.Responses {
			if r.Error != nil {
				resp.Responses[ref] = failure.Of(failure.Canceled).DataResponse("query " + ref + ": " + errDisposed.Error())
			}
		}
	}
	return resp, nil
}

// allFailed answers every query of the request with the same error, of
// kind k in the one error map (pkg/failure).
func allFailed(req *backend.QueryDataRequest, k failure.Kind, msg string) *backend.QueryDataResponse {
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		resp.Responses[q.RefID] = failure.Of(k).DataResponse(msg)
	}
	return resp
}
