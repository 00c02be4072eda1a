package grafanahost

import (
	"context"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
)

// Grafana Live, as Grafana drives a data source's channels ds/<uid>/<path>:
// SubscribeStream for each browser that subscribes, one RunStream per
// channel while it has subscribers (its context cancelled when the last
// one leaves), PublishStream for a browser's publication.

// SubscribeStream calls the stream service as Grafana does when a browser
// subscribes to the data source's channel path; data is the channel
// address's data (nil for none), which Grafana passes on.
func (h *Host) SubscribeStream(t testing.TB, ds backend.DataSourceInstanceSettings, path string, chanData []byte) *pluginv2.SubscribeStreamResponse {
	t.Helper()
	req := &backend.SubscribeStreamRequest{PluginContext: h.PluginContext(ds), Path: path, Data: chanData}
	resp, err := h.stream.SubscribeStream(ctx(t), backend.ToProto().SubscribeStreamRequest(req))
	if err != nil {
		t.Fatalf("SubscribeStream over gRPC: %v", err)
	}
	return resp
}

// PublishStream calls the stream service as Grafana does when a browser
// publishes to the channel.
func (h *Host) PublishStream(t testing.TB, ds backend.DataSourceInstanceSettings, path string, body []byte) *pluginv2.PublishStreamResponse {
	t.Helper()
	req := &backend.PublishStreamRequest{PluginContext: h.PluginContext(ds), Path: path, Data: body}
	resp, err := h.stream.PublishStream(ctx(t), backend.ToProto().PublishStreamRequest(req))
	if err != nil {
		t.Fatalf("PublishStream over gRPC: %v", err)
	}
	return resp
}

// Stream is one running RunStream call.
type Stream struct {
	// Frames receives each frame the plugin sends, in order; it is
	// closed when the call ends.
	Frames <-chan *data.Frame
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// RunStream starts the channel's stream as Grafana does for its first
// subscriber (with the channel's data, nil for none); Stop ends it as
// Grafana does when the last one leaves.
func (h *Host) RunStream(t testing.TB, ds backend.DataSourceInstanceSettings, path string, chanData []byte) *Stream {
	t.Helper()
	c, cancel := context.WithCancel(ctx(t))
	req := &backend.RunStreamRequest{PluginContext: h.PluginContext(ds), Path: path, Data: chanData}
	client, err := h.stream.RunStream(c, backend.ToProto().RunStreamRequest(req))
	if err != nil {
		cancel()
		t.Fatalf("RunStream over gRPC: %v", err)
	}
	frames := make(chan *data.Frame, 64)
	s := &Stream{Frames: frames, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(frames)
		for {
			packet, err := client.Recv()
			if err != nil {
				s.setErr(c, err)
				return
			}
			f := &data.Frame{}
			if err := f.UnmarshalJSON(packet.Data); err != nil {
				s.setErr(c, err)
				return
			}
			frames <- f
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

func (s *Stream) setErr(c context.Context, err error) {
	if c.Err() != nil {
		return // ended by Stop
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// Stop cancels the call, as Grafana does when the channel's last
// subscriber leaves, and waits until the stream has ended.
func (s *Stream) Stop() {
	s.cancel()
	for range s.Frames { // drain, so the reader can finish
	}
	<-s.done
}

// Err is why the stream ended other than by Stop (nil while it runs).
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// CollectMetrics calls the diagnostics service as Grafana does for
// /api/plugins/<id>/metrics: the plugin's own metrics in Prometheus' text
// format.
func (h *Host) CollectMetrics(t testing.TB) string {
	t.Helper()
	resp, err := h.diag.CollectMetrics(ctx(t), &pluginv2.CollectMetricsRequest{})
	if err != nil {
		t.Fatalf("CollectMetrics over gRPC: %v", err)
	}
	return string(resp.GetMetrics().GetPrometheus())
}
