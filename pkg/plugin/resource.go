package plugin

import (
	"context"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// CallResource serves the editor's resource routes. Only allow-listed paths
// exist; nothing is proxied to Prometheus as-is.
func (d *Datasource) CallResource(_ context.Context, req *backend.CallResourceRequest, sender backend.CallResourceResponseSender) error {
	return sender.Send(&backend.CallResourceResponse{
		Status:  http.StatusNotFound,
		Headers: map[string][]string{"Content-Type": {"application/json"}},
		Body:    []byte(`{"error":"unknown resource path"}`),
	})
}
