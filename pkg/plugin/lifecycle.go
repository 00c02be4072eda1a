package plugin

import (
	"context"
	"errors"
	"sync"
)

// errDisposed ends the work of an instance whose settings were replaced.
var errDisposed = errors.New("the data source's settings changed while this request ran; refresh to run it with the new settings")

// lifecycle lets Dispose end the instance's in-flight work and wait for it
// before the connections that work uses are closed.
type lifecycle struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex // guards disposed and inflight.Add
	disposed bool
	inflight sync.WaitGroup
}

func newLifecycle() *lifecycle {
	l := &lifecycle{}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	return l
}

// begin derives a request context that also ends when the instance is
// disposed; done must be called when the request ends. ok is false once
// the instance is disposed.
func (l *lifecycle) begin(ctx context.Context) (_ context.Context, done func(), ok bool) {
	l.mu.Lock()
	if l.disposed {
		l.mu.Unlock()
		return ctx, func() {}, false
	}
	l.inflight.Add(1)
	l.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(l.ctx, func() { cancel(errDisposed) })
	return ctx, func() {
		stop()
		cancel(nil)
		l.inflight.Done()
	}, true
}

// end cancels every in-flight request and waits until each has returned.
func (l *lifecycle) end() {
	l.mu.Lock()
	l.disposed = true
	l.mu.Unlock()
	l.cancel(errDisposed)
	l.inflight.Wait()
}

// disposedBy reports whether ctx ended because the instance was disposed.
func disposedBy(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errDisposed)
}
