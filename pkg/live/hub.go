package live

import (
	"context"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// TickFunc makes a channel's frame for the time at; it is called once per
// tick whatever the number of subscribers.
type TickFunc func(ctx context.Context, at time.Time) *data.Frame

// Hub runs one loop per channel key and fans each tick's frame out to
// every stream subscribed to that key. Grafana already runs one RunStream
// per channel; the hub makes the one-query-per-tick promise the plugin's
// own, for any host and for every identity-scoped key the plugin makes.
type Hub struct {
	// Now is the clock ticks are stamped with; time.Now when nil.
	Now func() time.Time

	mu      sync.Mutex
	streams map[string]*loop
}

// loop is one channel's ticker and its subscribers.
type loop struct {
	cancel context.CancelFunc
	done   chan struct{}
	subs   map[*subscriber]struct{}
}

// subscriber holds at most one frame: a stream that falls behind gets the
// newest tick, never a backlog.
type subscriber struct{ frames chan *data.Frame }

// Run subscribes to key until ctx ends or send fails, sending each tick's
// frame; the first subscriber of a key starts its loop (tick every every)
// and the last one to leave stops it and waits for it to end. The loop's
// ticks get ctx's values (the forwarded identity Prometheus is asked
// with), not its end: subscribers of one key share an identity, and the
// loop outlives the first of them when others remain.
func (h *Hub) Run(ctx context.Context, key string, every time.Duration, tick TickFunc, send func(*data.Frame) error) error {
	sub := h.join(ctx, key, every, tick)
	defer h.leave(key, sub)
	for {
		select {
		case <-ctx.Done():
			return nil
		case f := <-sub.frames:
			if err := send(f); err != nil {
				return err
			}
		}
	}
}

// Channels is how many channel loops run now.
func (h *Hub) Channels() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

func (h *Hub) join(values context.Context, key string, every time.Duration, tick TickFunc) *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams == nil {
		h.streams = map[string]*loop{}
	}
	l, ok := h.streams[key]
	if !ok {
		ctx, cancel := context.WithCancel(context.WithoutCancel(values))
		l = &loop{cancel: cancel, done: make(chan struct{}), subs: map[*subscriber]struct{}{}}
		h.streams[key] = l
		liveChannels.Inc()
		go h.run(ctx, l, every, tick)
	}
	sub := &subscriber{frames: make(chan *data.Frame, 1)}
	l.subs[sub] = struct{}{}
	return sub
}

func (h *Hub) leave(key string, sub *subscriber) {
	h.mu.Lock()
	l := h.streams[key]
	delete(l.subs, sub)
	last := len(l.subs) == 0
	if last {
		// Gone from the map before it stops, so a new subscriber starts
		// a fresh loop rather than joining one that is ending.
		delete(h.streams, key)
	}
	h.mu.Unlock()
	if last {
		l.cancel()
		<-l.done
	}
}

// run ticks at once (a new panel should not wait a whole interval) and
// then every every, until its last subscriber leaves.
func (h *Hub) run(ctx context.Context, l *loop, every time.Duration, tick TickFunc) {
	defer close(l.done)
	defer liveChannels.Dec()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		f := tick(ctx, h.now())
		if ctx.Err() != nil {
			return
		}
		h.fanOut(l, f)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (h *Hub) fanOut(l *loop, f *data.Frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range l.subs {
		select {
		case <-sub.frames: // drop the unsent older tick
		default:
		}
		sub.frames <- f
	}
}

func (h *Hub) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
