package plugin_test

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
)

// packets is a stream sender that hands each frame to the test.
type packets chan *data.Frame

func (p packets) Send(pk *backend.StreamPacket) error {
	f := &data.Frame{}
	if err := f.UnmarshalJSON(pk.Data); err != nil {
		return err
	}
	p <- f
	return nil
}

func runStream(d interface {
	RunStream(context.Context, *backend.RunStreamRequest, *backend.StreamSender) error
}, ds backend.DataSourceInstanceSettings, path string) (packets, chan error) {
	got, done := make(packets, 16), make(chan error, 1)
	req := &backend.RunStreamRequest{PluginContext: backend.PluginContext{DataSourceInstanceSettings: &ds}, Path: path}
	go func() { done <- d.RunStream(context.Background(), req, backend.NewStreamSender(got)) }()
	return got, done
}

// TestDisposeEndsStreams: a live stream still running when its instance is
// replaced ends, and leaves no goroutine or connection behind.
func TestDisposeEndsStreams(t *testing.T) {
	prom := newConnCounter(t, emptyPrometheus)
	baseline := runtime.NumGoroutine()
	ds := settings(prom.URL, `{"scrapeInterval":"1s"}`)
	d := newInstance(t, ds)
	got, done := runStream(d, ds, "queue")
	select {
	case f := <-got:
		require.Equal(t, "queue", f.Name)
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
	d.Dispose()
	select {
	case err := <-done:
		require.NoError(t, err, "a disposed instance's stream ends quietly; Grafana starts it again on the new instance")
	case <-time.After(10 * time.Second):
		t.Fatal("RunStream still running after Dispose")
	}
	require.True(t, settled(func() bool { return prom.openConns() == 0 }), "connections left open: %d", prom.openConns())
	if !settled(func() bool { return runtime.NumGoroutine() <= baseline }) {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatalf("goroutines: %d after Dispose, %d before the instance", runtime.NumGoroutine(), baseline)
	}
}

// TestStreamErrorsAreRedacted: a Prometheus that quotes a secret in its
// error page does not hand it to the panel through a live error frame.
func TestStreamErrorsAreRedacted(t *testing.T) {
	const secret = "hunter2-very-secret"
	prom := newConnCounter(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "proxy refused credentials "+secret, http.StatusBadGateway)
	})
	ds := settings(prom.URL, `{"scrapeInterval":"1s"}`)
	ds.DecryptedSecureJSONData = map[string]string{"basicAuthPassword": secret}
	d := newInstance(t, ds)
	defer d.Dispose()
	got, _ := runStream(d, ds, "queue")
	select {
	case f := <-got:
		require.NotEmpty(t, f.Meta.Notices)
		text := f.Meta.Notices[0].Text
		require.NotContains(t, text, secret)
		require.Contains(t, text, "[redacted]")
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
}
