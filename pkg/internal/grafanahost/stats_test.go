package grafanahost

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"
	"time"
)

// TestPooledConnections reads this process's own goroutine profile, in the
// format the plugin's pprof server writes, while a client holds a known
// number of keep-alive connections, and after it closes them.
func TestPooledConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond) // overlap the requests so each needs its own connection
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 10}
	client := &http.Client{Transport: tr}
	profile := func() string {
		var b bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := pooledConnections(profile())

	done := make(chan struct{})
	for range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := client.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}()
	}
	for range 3 {
		<-done
	}
	if got := pooledConnections(profile()) - before; got != 3 {
		t.Fatalf("three overlapping requests left %d pooled connections, want 3", got)
	}
	tr.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for pooledConnections(profile()) != before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := pooledConnections(profile()); got != before {
		t.Fatalf("after closing the idle connections %d are counted, want %d", got, before)
	}
}
