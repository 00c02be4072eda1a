package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// knownQueryTypes are the query types the product defines; the ones not yet
// built answer a clear per-query error instead of failing the request.
var knownQueryTypes = []string{"queue", "waitTime", "preemptions", "topk", "gpu"}

// QueryData answers each query on its own: one bad query never fails the
// others in the same request.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	resp := backend.NewQueryDataResponse()
	for _, q := range req.Queries {
		resp.Responses[q.RefID] = d.query(ctx, q)
	}
	return resp, nil
}

func (d *Datasource) query(_ context.Context, q backend.DataQuery) backend.DataResponse {
	if d.settingsErr != nil {
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream, d.settingsErr.Error())
	}
	var head struct {
		QueryType string `json:"queryType"`
	}
	if err := json.Unmarshal(q.JSON, &head); err != nil {
		return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream,
			fmt.Sprintf("query %s: malformed query JSON: %v", q.RefID, err))
	}
	qt := q.QueryType
	if qt == "" {
		qt = head.QueryType
	}
	for _, k := range knownQueryTypes {
		if k == qt {
			return backend.ErrDataResponseWithSource(backend.StatusNotImplemented, backend.ErrorSourcePlugin,
				fmt.Sprintf("query type %q is not implemented yet", qt))
		}
	}
	return backend.ErrDataResponseWithSource(backend.StatusBadRequest, backend.ErrorSourceDownstream,
		fmt.Sprintf("unknown query type %q; allowed: %s", qt, strings.Join(knownQueryTypes, ", ")))
}
