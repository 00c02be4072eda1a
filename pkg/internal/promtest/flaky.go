package promtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Flaky is how a FlakyTarget misbehaves: every scrape waits Delay, and
// every Every-th scrape (the 1st, Every+1-th, … are fine) either waits
// Stall more (past the scrape timeout: Prometheus gives up, up is 0) or,
// with Status set, answers that status (e.g. 500) without a body.
type Flaky struct {
	Delay, Stall time.Duration
	Status       int
	Every        int
}

// FlakyTarget serves the exposition of upstream (a host:port answering
// /metrics, e.g. a simulator engine's) through a proxy that misbehaves as
// f says: a vLLM server whose /metrics is slow under load, or that fails
// now and then. It returns the proxy's host:port; a scrape Prometheus gave
// up on ends the proxy's wait.
func FlakyTarget(t testing.TB, upstream string, f Flaky) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		bad := f.Every > 0 && n.Add(1)%int64(f.Every) == 0
		if bad && f.Status != 0 {
			w.WriteHeader(f.Status)
			return
		}
		wait := f.Delay
		if bad {
			wait += f.Stall
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		proxy(w, r, upstream)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// proxy copies upstream's /metrics answer (its Content-Type and body).
func proxy(w http.ResponseWriter, r *http.Request, upstream string) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+upstream+"/metrics", nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
