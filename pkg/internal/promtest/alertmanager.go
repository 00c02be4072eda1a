package promtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Alertmanager is a running Alertmanager (Debian's prometheus-alertmanager).
type Alertmanager struct {
	URL  string
	Addr string
}

// AlertmanagerBinary finds Debian's prometheus-alertmanager, or fails the
// test saying how to install it.
func AlertmanagerBinary(t testing.TB) string {
	t.Helper()
	return lookPath(t, "ALERTMANAGER_BIN", "prometheus-alertmanager", "apt-get install -y prometheus-alertmanager")
}

// AmtoolBinary finds amtool, from the same Debian package.
func AmtoolBinary(t testing.TB) string {
	t.Helper()
	return lookPath(t, "AMTOOL_BIN", "amtool", "apt-get install -y prometheus-alertmanager")
}

// StartAlertmanager runs Alertmanager with the config file on a free
// loopback port, alone (clustering off: a test's Alertmanager must not
// gossip with another test's on the default port 9094), and waits until it
// is ready. It is killed when the test ends.
func StartAlertmanager(t testing.TB, configFile string) *Alertmanager {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t)
	logPath := filepath.Join(dir, "alertmanager.log")
	p := startProcess(t, AlertmanagerBinary(t), []string{"--config.file=" + configFile,
		"--storage.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr,
		"--cluster.listen-address=", "--log.level=warn"}, logPath)
	t.Cleanup(func() { p.kill(); _ = p.log.Close() })
	am := &Alertmanager{URL: "http://" + addr, Addr: addr}
	waitOK(t, "alertmanager", am.URL+"/-/ready", logPath)
	return am
}

// AMAlert is one alert as Alertmanager's API v2 lists it.
type AMAlert struct {
	Fingerprint string            `json:"fingerprint"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Receivers   []struct {
		Name string `json:"name"`
	} `json:"receivers"`
	Status struct {
		State       string   `json:"state"` // active, suppressed, unprocessed
		InhibitedBy []string `json:"inhibitedBy"`
		SilencedBy  []string `json:"silencedBy"`
	} `json:"status"`
}

// Alerts lists the alerts Alertmanager holds, muted ones included.
func (a *Alertmanager) Alerts(t testing.TB) []AMAlert {
	t.Helper()
	resp, err := http.Get(a.URL + "/api/v2/alerts")
	if err != nil {
		t.Fatalf("alertmanager alerts: %v", err)
	}
	defer resp.Body.Close()
	var out []AMAlert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode alertmanager alerts (%s): %v", resp.Status, err)
	}
	return out
}

// Notification is one webhook notification from Alertmanager (its webhook
// payload, version 4), with the path it was posted to.
type Notification struct {
	Path     string `json:"-"`
	Received time.Time
	Receiver string `json:"receiver"`
	Status   string `json:"status"`
	Alerts   []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    time.Time         `json:"startsAt"`
	} `json:"alerts"`
}

// Webhook receives Alertmanager's webhook notifications on any path and
// keeps them, so a test can point each receiver at its own path.
type Webhook struct {
	URL string

	mu  sync.Mutex
	got []Notification
}

// StartWebhook starts a webhook receiver on loopback, closed when the test
// ends. A body it cannot decode fails the test: Alertmanager's payload is
// what the receivers' checks read.
func StartWebhook(t testing.TB) *Webhook {
	t.Helper()
	w := &Webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var n Notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook %s: decode: %v", r.URL.Path, err)
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		n.Path, n.Received = r.URL.Path, time.Now()
		w.mu.Lock()
		w.got = append(w.got, n)
		w.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}

// Notifications returns what was posted to path so far, oldest first.
func (w *Webhook) Notifications(path string) []Notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Notification
	for _, n := range w.got {
		if n.Path == path {
			out = append(out, n)
		}
	}
	return out
}
