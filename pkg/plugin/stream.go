package plugin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/live"
)

var _ backend.StreamHandler = (*Datasource)(nil)

// SubscribeStream admits a panel to a live channel (ds/<uid>/<path>) whose
// path pkg/live accepts; any other path is refused as not found, with the
// reason in the initial data and the plugin's log (Grafana tells the
// browser only that the channel does not exist).
func (d *Datasource) SubscribeStream(_ context.Context, req *backend.SubscribeStreamRequest) (*backend.SubscribeStreamResponse, error) {
	if _, err := d.channel(req.Path, req.Data); err != nil {
		msg := d.redact.string(err.Error())
		backend.Logger.Warn("live channel refused", "reason", msg)
		body, _ := json.Marshal(map[string]string{"error": msg})
		initial, _ := backend.NewInitialData(body)
		return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusNotFound, InitialData: initial}, nil
	}
	return &backend.SubscribeStreamResponse{Status: backend.SubscribeStreamStatusOK}, nil
}

// PublishStream is refused: the channels carry what Prometheus says, and
// nothing a browser sends.
func (d *Datasource) PublishStream(context.Context, *backend.PublishStreamRequest) (*backend.PublishStreamResponse, error) {
	return &backend.PublishStreamResponse{Status: backend.PublishStreamStatusPermissionDenied}, nil
}

// RunStream pushes a channel's frames until Grafana ends the call (its
// last subscriber left) or the instance is disposed. Streams of one path
// and identity share one loop in the instance's hub: one query per tick.
func (d *Datasource) RunStream(ctx context.Context, req *backend.RunStreamRequest, sender *backend.StreamSender) error {
	c, err := d.channel(req.Path, req.Data)
	if err != nil {
		return err
	}
	u := d.userOf(ctx, req.GetHTTPHeaders())
	ctx, done, ok := d.life.begin(u.ctx)
	defer done()
	if !ok {
		return errDisposed
	}
	next := c.Tick(u.scope.executor)
	tick := func(ctx context.Context, at time.Time) *data.Frame {
		f := next(ctx, at)
		u.redact.frame(f) // once per tick, before the frame is shared
		return f
	}
	return d.hub.Run(ctx, u.key+"\x00"+c.Path, c.Every, tick, func(f *data.Frame) error {
		return sender.SendFrame(f, data.IncludeAll)
	})
}

// channel validates a path, and the data Grafana passes with it, against
// this instance's scrape interval.
func (d *Datasource) channel(path string, data []byte) (live.Channel, error) {
	if d.settingsErr != nil {
		return live.Channel{}, d.settingsErr
	}
	return live.ParseChannel(path, data, d.settings.ScrapeInterval)
}
