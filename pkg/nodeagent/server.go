package nodeagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// DefaultListen is where the agent listens unless told otherwise: loopback
// only, so nothing outside the node reads it by accident.
const DefaultListen = "127.0.0.1:9400"

// Server timeouts: the answers are small and quick, so keep them short.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
)

// Config is what the HTTP handler needs.
type Config struct {
	// Node is reported as the node name.
	Node string
	// Source reads the GPUs; wrap it in NewCached to bound driver calls.
	Source Source
	// Token, when set, is required as a bearer token on every path but /healthz.
	Token string
	// Delay is added before every answer (simulate mode, to test slow agents).
	Delay time.Duration
	// Logger gets request failures; nil discards them.
	Logger *slog.Logger
}

// NewHandler serves GET /v1/gpus, GET /metrics and GET /healthz. Other
// methods get 405, other paths 404.
func NewHandler(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{cfg: cfg, token: tokenDigest(cfg.Token)}
	mux := http.NewServeMux()
	mux.Handle("GET "+agentapi.GPUsPath, h.authorized(http.HandlerFunc(h.gpus)))
	mux.Handle("GET /metrics", h.authorized(http.HandlerFunc(h.metrics)))
	mux.HandleFunc("GET /healthz", healthz)
	return h.delayed(mux)
}

// NewServer wraps a handler in an http.Server with read, write and idle
// timeouts.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
}

type handler struct {
	cfg   Config
	token []byte // SHA-256 of the token; nil when none is required
}

// tokenDigest hashes the token so the comparison takes the same time
// whatever the length of the guess.
func tokenDigest(token string) []byte {
	if token == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// authorized requires "Authorization: Bearer <token>" when a token is set.
func (h *handler) authorized(next http.Handler) http.Handler {
	if h.token == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], h.token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vllm-node-agent"`)
			writeJSONError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// delayed waits cfg.Delay before answering, or until the client gives up.
func (h *handler) delayed(next http.Handler) http.Handler {
	if h.cfg.Delay <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(h.cfg.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			next.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	})
}

func (h *handler) gpus(w http.ResponseWriter, r *http.Request) {
	gpus, ok := h.read(w, r)
	if !ok {
		return
	}
	if gpus == nil {
		gpus = []agentapi.GPU{}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(agentapi.Report{Node: h.cfg.Node, GPUs: gpus}); err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	gpus, ok := h.read(w, r)
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := WriteMetrics(&buf, gpus); err != nil {
		h.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", MetricsContentType)
	_, _ = w.Write(buf.Bytes())
}

// read gets the GPUs, answering 503 itself when they cannot be read.
func (h *handler) read(w http.ResponseWriter, r *http.Request) ([]agentapi.GPU, bool) {
	gpus, err := h.cfg.Source.GPUs(r.Context())
	if err != nil {
		h.fail(w, r, http.StatusServiceUnavailable, err)
		return nil, false
	}
	return gpus, true
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, code int, err error) {
	if r.Context().Err() != nil {
		return // the client is gone
	}
	h.cfg.Logger.Warn("request failed", "path", r.URL.Path, "status", code, "error", err)
	writeJSONError(w, code, err.Error())
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// Run serves srv on ln until ctx ends, then shuts it down gracefully.
func Run(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shutting down: %w", err)
		}
		return nil
	}
}
