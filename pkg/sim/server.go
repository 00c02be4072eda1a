package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// serving is what Start runs: one HTTP server per instance and the driver.
type serving struct {
	servers []*http.Server
	cancel  context.CancelFunc
	done    chan struct{} // closed when the driver and servers have stopped
}

// Handler serves one instance: GET /metrics (the exposition, with
// ContentType), GET /health (200, like vLLM's), and vLLM's sleep-mode
// endpoints POST /sleep?level=1|2, POST /wake_up and GET /is_sleeping
// (see Fleet.SetSleep), POST /debug/wedge, which wedges the instance's
// engines for good (see Fleet.Wedge), POST /debug/kv-transfer-fail?count=N,
// which fails a decode instance's next N KV transfers (Fleet.FailKVTransfers),
// and POST /debug/kv-expire?count=N, which counts N expired KV leases on a
// prefill instance (Fleet.ExpireKV). An index outside the fleet gets 404
// for every path.
func (f *Fleet) Handler(instance int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		if err := f.WriteMetrics(w, instance); err != nil {
			// Headers are gone by the time a write fails; only a bad index
			// can still become a proper status.
			if errors.Is(err, ErrNoInstance) {
				http.Error(w, err.Error(), http.StatusNotFound)
			}
		}
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		if instance < 0 || instance >= len(f.instances) {
			http.NotFound(w, nil)
		}
	})
	mux.HandleFunc("POST /sleep", func(w http.ResponseWriter, r *http.Request) {
		level := 1
		if s := r.URL.Query().Get("level"); s != "" {
			var err error
			if level, err = strconv.Atoi(s); err != nil || level < 1 {
				http.Error(w, "level must be 1 or 2", http.StatusBadRequest)
				return
			}
		}
		writeSleepError(w, f.SetSleep(instance, level))
	})
	mux.HandleFunc("POST /wake_up", func(w http.ResponseWriter, _ *http.Request) {
		writeSleepError(w, f.SetSleep(instance, 0))
	})
	mux.HandleFunc("POST /debug/wedge", func(w http.ResponseWriter, _ *http.Request) {
		writeSleepError(w, f.Wedge(instance))
	})
	mux.HandleFunc("POST /debug/kv-transfer-fail", func(w http.ResponseWriter, r *http.Request) {
		withCount(w, r, func(n int) error { return f.FailKVTransfers(instance, n) })
	})
	mux.HandleFunc("POST /debug/kv-expire", func(w http.ResponseWriter, r *http.Request) {
		withCount(w, r, func(n int) error { return f.ExpireKV(instance, n) })
	})
	mux.HandleFunc("GET /is_sleeping", func(w http.ResponseWriter, _ *http.Request) {
		asleep, err := f.Sleeping(instance)
		if err != nil {
			writeSleepError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"is_sleeping":%t}`, asleep)
	})
	return mux
}

// withCount runs apply with the request's count parameter (1 when absent)
// and writes its error as a status.
func withCount(w http.ResponseWriter, r *http.Request, apply func(int) error) {
	n := 1
	if s := r.URL.Query().Get("count"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			http.Error(w, "count must be a whole number ≥ 1", http.StatusBadRequest)
			return
		}
	}
	writeSleepError(w, apply(n))
}

// writeSleepError maps a SetSleep error to a status; nil writes 200.
func writeSleepError(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
	case errors.Is(err, ErrNoInstance):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

// Start binds one listener per instance on Config.Listen (port
// InstanceConfig.Port, else Config.BasePort+index, else a free port), serves
// Handler on each, and drives all engines from one goroutine every
// Config.Tick at Config.Speed times the wall clock, continuing from the
// current simulated time. It returns the endpoints with their addresses.
// Cancelling ctx or calling Close stops everything.
func (f *Fleet) Start(ctx context.Context) ([]Endpoint, error) {
	f.mu.Lock()
	if err := f.startable(); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	lns, err := f.listen()
	if err != nil {
		f.mu.Unlock()
		return nil, err
	}
	f.clk = clockMap{wall0: time.Now(), sim0: f.now, speed: f.cfg.Speed}
	f.running = true
	f.srv = f.serve(ctx, lns)
	f.mu.Unlock()
	return f.Endpoints(), nil
}

func (f *Fleet) startable() error {
	switch {
	case f.closed:
		return ErrClosed
	case f.running:
		return ErrRunning
	}
	return nil
}

// listen binds every instance's port, or none: on a failure the ports
// already bound are released. The caller holds f.mu.
func (f *Fleet) listen() ([]net.Listener, error) {
	var lns []net.Listener
	for i, inst := range f.instances {
		port := inst.cfg.Port
		if port == 0 && f.cfg.BasePort > 0 {
			port = f.cfg.BasePort + i
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(f.cfg.Listen, strconv.Itoa(port)))
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, fmt.Errorf("sim: instance %d: %w", i, err)
		}
		inst.addr = ln.Addr().String()
		lns = append(lns, ln)
	}
	return lns, nil
}

// serve starts the servers and the driver. The caller holds f.mu.
func (f *Fleet) serve(ctx context.Context, lns []net.Listener) *serving {
	ctx, cancel := context.WithCancel(ctx)
	s := &serving{cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	for i, ln := range lns {
		srv := &http.Server{Handler: f.Handler(i), ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		wg.Go(func() { _ = srv.Serve(ln) }) // returns ErrServerClosed on shutdown
	}
	go func() {
		f.drive(ctx)
		s.shutdown()
		wg.Wait()
		f.stopped()
		close(s.done)
	}()
	return s
}

// drive is the one goroutine that advances every engine to the wall-clock
// simulated time each tick. Engines also catch up when scraped, so the tick
// only bounds how stale Snapshot-free readers can get.
func (f *Fleet) drive(ctx context.Context) {
	t := time.NewTicker(f.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			until, _ := f.clock()
			for _, e := range f.engines {
				e.advanceLocked(until)
			}
		}
	}
}

func (s *serving) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		_ = srv.Shutdown(ctx) // best effort: the listener is closed either way
	}
}

// stopped freezes simulated time where the wall clock left it, so Advance
// can continue from there.
func (f *Fleet) stopped() {
	f.clock()
	f.mu.Lock()
	f.running = false
	f.mu.Unlock()
}

// Close stops the driver and the servers and waits for them. Advance and
// the readers keep working on the frozen state. Close is idempotent.
func (f *Fleet) Close() error {
	f.mu.Lock()
	f.closed = true
	s := f.srv
	f.srv = nil
	f.mu.Unlock()
	if s != nil {
		s.cancel()
		<-s.done
	}
	return nil
}
