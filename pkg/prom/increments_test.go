package prom

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"
)

// world is a fake Prometheus whose series have a value at every step of
// any range: value(series, t) is a function of t, so a full fetch and a
// spliced answer can be compared exactly. A series may exist only from
// born (inclusive) and until died (exclusive), like a restarted engine.
type world struct {
	step   time.Duration
	series []worldSeries
	asked  []v1.Range
	fail   error
	warn   []string
}

type worldSeries struct {
	name        string
	born, died  time.Time
	scale, bias float64
}

func (w *world) fetch(_ context.Context, start, end time.Time) (Matrix, []string, error) {
	w.asked = append(w.asked, v1.Range{Start: start, End: end, Step: w.step})
	if w.fail != nil {
		return nil, nil, w.fail
	}
	var m Matrix
	for _, ws := range w.series {
		s := &Series{Labels: map[string]string{"instance": ws.name}}
		for t := start; !t.After(end); t = t.Add(w.step) {
			if (!ws.born.IsZero() && t.Before(ws.born)) || (!ws.died.IsZero() && !t.Before(ws.died)) {
				continue
			}
			s.Times = append(s.Times, t)
			s.Values = append(s.Values, ws.bias+ws.scale*float64(t.Unix()%1000))
		}
		if len(s.Times) > 0 {
			m = append(m, s)
		}
	}
	return m, w.warn, nil
}

// full is what one fetch of the whole range answers, for comparison.
func (w *world) full(r v1.Range) Matrix {
	asked := w.asked
	m, _, _ := w.fetch(context.Background(), r.Start, r.End)
	w.asked = asked
	return Splice(nil, m)
}

func TestIncrementsAskOnlyForTheStepsThatMayChange(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(time.Hour)}
	w := &world{step: step, series: []worldSeries{
		{name: "a", scale: 1},
		{name: "b", scale: 2, bias: 7},
		{name: "gone", scale: 1, died: t0.Add(40 * time.Minute)},           // stopped before the overlap
		{name: "late", scale: 3, born: t0.Add(time.Hour + 30*time.Second)}, // appears only in the tail
	}}
	inc := NewIncrements(10*time.Minute, 0, clock.now)
	ctx := context.Background()

	r1 := v1.Range{Start: t0, End: t0.Add(time.Hour), Step: step}
	m, warn, err := inc.Query(ctx, "k", r1, w.fetch)
	require.NoError(t, err)
	require.Equal(t, []v1.Range{r1}, w.asked, "the first answer is a full fetch")
	require.Equal(t, w.full(r1), m)
	require.Empty(t, warn)

	// A minute later the dashboard asks for the last hour again.
	clock.add(time.Minute)
	r2 := v1.Range{Start: t0.Add(time.Minute), End: t0.Add(time.Hour + time.Minute), Step: step}
	m, _, err = inc.Query(ctx, "k", r2, w.fetch)
	require.NoError(t, err)
	tail := v1.Range{Start: t0.Add(50*time.Minute + step), End: r2.End, Step: step}
	require.Equal(t, tail, w.asked[1], "only the steps after the first fetch's moment minus the overlap")
	require.Equal(t, w.full(r2), m, "the spliced answer is the full fetch's")
	require.Equal(t, IncrementStats{Full: 1, Tails: 1, Bytes: m.SizeBytes(), Bases: 1}, inc.Stats())

	// Zoomed into the past, inside the final part: no fetch at all.
	r3 := v1.Range{Start: t0.Add(10 * time.Minute), End: t0.Add(20 * time.Minute), Step: step}
	m, _, err = inc.Query(ctx, "k", r3, w.fetch)
	require.NoError(t, err)
	require.Len(t, w.asked, 2)
	require.Equal(t, w.full(r3), m)
	require.Equal(t, int64(1), inc.Stats().Reused)
}

func TestIncrementsFetchWholeRangesTheyCannotSplice(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	base := v1.Range{Start: t0, End: t0.Add(time.Hour), Step: step}
	cases := []struct {
		name string
		r    v1.Range
		wait time.Duration
	}{
		{"starts before the kept answer", v1.Range{Start: t0.Add(-step), End: base.End, Step: step}, 0},
		{"another grid", v1.Range{Start: t0.Add(2 * time.Second), End: base.End.Add(2 * time.Second), Step: step}, 0},
		{"starts after its final part", v1.Range{Start: t0.Add(55 * time.Minute), End: t0.Add(70 * time.Minute), Step: step}, 0},
		{"kept answer was fetched too early to hold a final step", base, -time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: base.End.Add(tc.wait)}
			w := &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}
			inc := NewIncrements(10*time.Minute, 0, clock.now)
			_, _, err := inc.Query(context.Background(), "k", base, w.fetch)
			require.NoError(t, err)
			clock.t = base.End.Add(time.Minute)
			m, _, err := inc.Query(context.Background(), "k", tc.r, w.fetch)
			require.NoError(t, err)
			require.Equal(t, tc.r, w.asked[len(w.asked)-1])
			require.Equal(t, w.full(tc.r), m)
			require.Equal(t, int64(2), inc.Stats().Full)
		})
	}
}

func TestIncrementsKeysAreSeparate(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(2 * time.Hour)}
	a := &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}
	b := &world{step: step, series: []worldSeries{{name: "b", scale: 5}}}
	inc := NewIncrements(time.Minute, 0, clock.now)
	r := v1.Range{Start: t0, End: t0.Add(time.Hour), Step: step}
	_, _, err := inc.Query(context.Background(), "a", r, a.fetch)
	require.NoError(t, err)
	m, _, err := inc.Query(context.Background(), "b", r, b.fetch)
	require.NoError(t, err)
	require.Equal(t, b.full(r), m, "another key never sees a's answer")
	require.Equal(t, []v1.Range{r}, b.asked)
}

// hourKept is a store holding the answer for the hour before t0+1h,
// fetched then, a minute later; r2 is that hour moved on by the minute.
func hourKept(t *testing.T) (w *world, inc *Increments, r2 v1.Range) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(time.Hour)}
	w = &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}
	inc = NewIncrements(10*time.Minute, 0, clock.now)
	_, _, err := inc.Query(context.Background(), "k", v1.Range{Start: t0, End: t0.Add(time.Hour), Step: step}, w.fetch)
	require.NoError(t, err)
	clock.add(time.Minute)
	return w, inc, v1.Range{Start: t0.Add(time.Minute), End: t0.Add(time.Hour + time.Minute), Step: step}
}

func TestIncrementsKeepTheBaseWhenATailFails(t *testing.T) {
	w, inc, r2 := hourKept(t)
	ctx := context.Background()
	w.fail = errors.New("prometheus is down")
	_, _, err := inc.Query(ctx, "k", r2, w.fetch)
	require.ErrorIs(t, err, w.fail)

	w.fail = nil
	m, _, err := inc.Query(ctx, "k", r2, w.fetch)
	require.NoError(t, err)
	require.Equal(t, r2.Start.Add(49*time.Minute+r2.Step), w.asked[2].Start, "the old base still serves its final steps")
	require.Equal(t, w.full(r2), m)
}

func TestIncrementsMemoryBound(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	step := 5 * time.Second
	clock := &fakeClock{t: t0.Add(time.Hour)}
	w := &world{step: step, series: []worldSeries{{name: "a", scale: 1}}}
	r := v1.Range{Start: t0, End: t0.Add(time.Hour), Step: step}
	one := w.full(r).SizeBytes()

	t.Run("least recently used goes first", func(t *testing.T) {
		inc := NewIncrements(time.Minute, 4*one+one/2, clock.now)
		for i := range 6 {
			_, _, err := inc.Query(context.Background(), fmt.Sprint(i), r, w.fetch)
			require.NoError(t, err)
		}
		s := inc.Stats()
		require.Equal(t, 4, s.Bases)
		require.Equal(t, int64(2), s.Evictions)
		require.LessOrEqual(t, s.Bytes, 4*one+one/2)
		w.asked = nil
		_, _, err := inc.Query(context.Background(), "0", r, w.fetch)
		require.NoError(t, err)
		require.Equal(t, []v1.Range{r}, w.asked, "an evicted base is fetched whole")
	})
	t.Run("too big to keep", func(t *testing.T) {
		inc := NewIncrements(time.Minute, 4*one-1, clock.now)
		_, _, err := inc.Query(context.Background(), "k", r, w.fetch)
		require.NoError(t, err)
		require.Equal(t, IncrementStats{Full: 1}, inc.Stats())
	})
}

func TestIncrementalRefusesTheAtModifier(t *testing.T) {
	cases := map[string]bool{
		`rate(vllm:num_preemptions_total[5m])`:                 true,
		`vllm:num_requests_waiting @ start()`:                  false,
		`max_over_time(vllm:num_requests_waiting[1h] @ end())`: false,
		`vllm:num_requests_waiting @ 1700000000`:               false,
	}
	for expr, want := range cases {
		t.Run(expr, func(t *testing.T) { require.Equal(t, want, Incremental(expr)) })
	}
}

func TestSpliceJoinsSeriesByLabels(t *testing.T) {
	t0 := time.Unix(100, 0)
	s := func(labels map[string]string, from int, vals ...float64) *Series {
		out := &Series{Labels: labels}
		for i, v := range vals {
			out.Times = append(out.Times, t0.Add(time.Duration(from+i)*time.Second))
			out.Values = append(out.Values, v)
		}
		return out
	}
	a := map[string]string{"instance": "a", "model_name": "m"}
	b := map[string]string{"instance": "b"}
	c := map[string]string{"instance": "a", "model_name": "n"}
	early := Matrix{s(c, 0, 1), s(a, 0, 1, 2)}
	late := Matrix{s(a, 2, 3), s(b, 2, 9)}
	got := Splice(early, late)
	require.Equal(t, Matrix{s(a, 0, 1, 2, 3), s(c, 0, 1), s(b, 2, 9)}, got, "sorted by labels as Prometheus sorts them")
	require.Equal(t, Matrix{s(a, 1, 2)}, Matrix{s(a, 0, 1, 2)}.Between(t0.Add(time.Second), t0.Add(5*time.Second)))
}

func TestIncrementsKeepNoAnswerThatWarned(t *testing.T) {
	w, inc, r2 := hourKept(t)
	ctx := context.Background()
	// A tail that warns (a partial answer) is returned with its warning,
	// and the base is forgotten: its steps may be missing a store's data.
	w.warn = []string{"store 10.0.0.1:10901 unavailable"}
	_, warn, err := inc.Query(ctx, "k", r2, w.fetch)
	require.NoError(t, err)
	require.Equal(t, w.warn, warn)
	require.Equal(t, 0, inc.Stats().Bases)

	w.warn = nil
	m, warn, err := inc.Query(ctx, "k", r2, w.fetch)
	require.NoError(t, err)
	require.Empty(t, warn)
	require.Equal(t, r2, w.asked[len(w.asked)-1], "after a warning the range is fetched whole")
	require.Equal(t, w.full(r2), m)
}
