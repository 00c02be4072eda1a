package plugin

import (
	"context"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"

	"github.com/inferops/vllm-datasource/pkg/failure"
	"github.com/inferops/vllm-datasource/pkg/resources"
)

// CallResource serves the editor's allow-listed resource routes (models,
// instances, engines); any other path is 404.
func (d *Datasource) CallResource(ctx context.Context, req *backend.CallResourceRequest, sender backend.CallResourceResponseSender) error {
	if d.settingsErr != nil {
		sender = d.redact.sender(sender)
		invalid := failure.Of(failure.InvalidInput)
		invalid.Record(ctx)
		return sender.Send(&backend.CallResourceResponse{Status: invalid.HTTPStatus(),
			Headers: map[string][]string{"Content-Type": {"application/json"}},
			Body:    []byte(`{"error":"data source settings are invalid; open the data source and press Save & test"}`)})
	}
	u := d.userOf(ctx, req.GetHTTPHeaders())
	sender = u.redact.sender(sender)
	ctx, done, ok := d.life.begin(u.ctx)
	defer done()
	if !ok {
		// Not the error map's Canceled: 503 tells the browser to retry,
		// and the replacing instance will answer.
		return sender.Send(&backend.CallResourceResponse{Status: http.StatusServiceUnavailable,
			Headers: map[string][]string{"Content-Type": {"application/json"}},
			Body:    []byte(`{"error":"` + errDisposed.Error() + `"}`)})
	}
	res := u.scope.profiles.Resolve(ctx)
	h := &resources.Handler{Prom: d.prom, Settings: res.Settings, Now: d.now, Detect: res.Detector.Get}
	return httpadapter.New(h.Mux()).CallResource(ctx, req, sender)
}
