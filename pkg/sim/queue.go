package sim

// deque is a ring-buffer double-ended queue. The waiting queue needs both
// ends: arrivals join the back, preempted requests return to the front.
type deque[T any] struct {
	buf        []T
	head, size int
}

func (d *deque[T]) len() int { return d.size }

func (d *deque[T]) front() T { return d.buf[d.head] }

// at returns the i-th value from the front.
func (d *deque[T]) at(i int) T { return d.buf[(d.head+i)%len(d.buf)] }

// removeAt removes and returns the i-th value from the front, keeping the
// order of the others.
func (d *deque[T]) removeAt(i int) T {
	if i == 0 {
		return d.popFront()
	}
	v := d.at(i)
	for j := i; j < d.size-1; j++ {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j+1)%len(d.buf)]
	}
	var zero T
	d.buf[(d.head+d.size-1)%len(d.buf)] = zero
	d.size--
	return v
}

// appendTo appends the values front to back to dst.
func (d *deque[T]) appendTo(dst []T) []T {
	for i := range d.size {
		dst = append(dst, d.at(i))
	}
	return dst
}

// insertAt inserts v so that it becomes the i-th value from the front.
func (d *deque[T]) insertAt(i int, v T) {
	d.pushBack(v)
	for j := d.size - 1; j > i; j-- {
		d.buf[(d.head+j)%len(d.buf)] = d.buf[(d.head+j-1)%len(d.buf)]
	}
	d.buf[(d.head+i)%len(d.buf)] = v
}

func (d *deque[T]) pushBack(v T) {
	d.grow()
	d.buf[(d.head+d.size)%len(d.buf)] = v
	d.size++
}

func (d *deque[T]) pushFront(v T) {
	d.grow()
	d.head = (d.head - 1 + len(d.buf)) % len(d.buf)
	d.buf[d.head] = v
	d.size++
}

func (d *deque[T]) popFront() T {
	var zero T
	v := d.buf[d.head]
	d.buf[d.head] = zero // let the GC have finished requests
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	return v
}

func (d *deque[T]) grow() {
	if d.size < len(d.buf) {
		return
	}
	nb := make([]T, max(16, 2*len(d.buf)))
	for i := range d.size {
		nb[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = nb, 0
}

// ring keeps the newest limit values pushed to it.
type ring[T any] struct {
	buf    []T
	next   int
	limit  int
	pushed uint64 // values pushed so far; the next push gets this sequence number
}

func newRing[T any](limit int) ring[T] { return ring[T]{limit: limit} }

// push keeps v and returns its sequence number (0 for the first push).
func (r *ring[T]) push(v T) uint64 {
	seq := r.pushed
	r.pushed++
	switch {
	case r.limit == 0:
	case len(r.buf) < r.limit:
		r.buf = append(r.buf, v)
	default:
		r.buf[r.next] = v
		r.next = (r.next + 1) % r.limit
	}
	return seq
}

// at returns the value pushed with sequence number seq, or nil once it has
// been dropped. Pushes fill the buffer in order and then wrap, so seq sits
// at seq mod limit.
func (r *ring[T]) at(seq uint64) *T {
	if r.limit == 0 || seq >= r.pushed || r.pushed-seq > uint64(r.limit) {
		return nil
	}
	return &r.buf[seq%uint64(r.limit)]
}

// appendTo appends the kept values, oldest first.
func (r *ring[T]) appendTo(out []T) []T {
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
