package live_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/live"
)

// scripted answers each tick's query with the next answer and keeps the
// queries it was asked.
type scripted struct {
	answers []backend.DataResponse
	asked   []backend.DataQuery
}

func (s *scripted) QueryData(_ context.Context, req *backend.QueryDataRequest) *backend.QueryDataResponse {
	s.asked = append(s.asked, req.Queries...)
	resp := backend.NewQueryDataResponse()
	resp.Responses[req.Queries[0].RefID] = s.answers[0]
	s.answers = s.answers[1:]
	return resp
}

func seriesAnswer(v float64, at time.Time) backend.DataResponse {
	value := data.NewField("Value", data.Labels{"instance": "a:1", "signal": "waiting"}, []float64{v})
	return backend.DataResponse{Frames: data.Frames{data.NewFrame("a:1 waiting", data.NewField("Time", nil, []time.Time{at}), value)}}
}

// TestTickRunsTheQueryAndFramesIt: a tick asks the kind's query over the
// last few ticks with the tick as its interval, and a failed tick is an
// error frame after which the next good tick is framed as before (the
// stream recovers).
func TestTickRunsTheQueryAndFramesIt(t *testing.T) {
	c, err := live.ParseChannel(path("queue", `{"grouping":"instance","every":"2s"}`), nil, time.Second)
	require.NoError(t, err)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	q := &scripted{answers: []backend.DataResponse{
		seriesAnswer(3, t0),
		backend.ErrDataResponse(backend.StatusBadGateway, "Prometheus is unreachable: connection refused"),
		seriesAnswer(5, t0.Add(4*time.Second)),
	}}
	tick := c.Tick(q)
	ctx := context.Background()

	f := tick(ctx, t0)
	require.Equal(t, "queue", f.Name)
	require.Equal(t, 3.0, *f.Fields[1].At(0).(*float64))
	dq := q.asked[0]
	require.Equal(t, "queue", dq.QueryType)
	require.Equal(t, 2*time.Second, dq.Interval)
	require.Equal(t, t0, dq.TimeRange.To)
	require.Equal(t, t0.Add(-8*time.Second), dq.TimeRange.From)
	require.JSONEq(t, `{"queryType":"queue","grouping":"instance"}`, string(dq.JSON))

	f = tick(ctx, t0.Add(2*time.Second))
	require.Equal(t, data.NoticeSeverityError, f.Meta.Notices[0].Severity)
	require.Contains(t, f.Meta.Notices[0].Text, "Prometheus is unreachable")
	require.Equal(t, t0.Add(2*time.Second), f.Fields[0].At(0))

	f = tick(ctx, t0.Add(4*time.Second))
	require.Empty(t, f.Meta.Notices)
	require.Equal(t, 5.0, *f.Fields[1].At(0).(*float64), "recovered")
}

// TestFleetTickIsTheTable: a fleet tick pushes the handler's table.
func TestFleetTickIsTheTable(t *testing.T) {
	c, err := live.ParseChannel(path("fleet", `{"worst":1}`), nil, time.Second)
	require.NoError(t, err)
	table := data.NewFrame("fleet", data.NewField("instance", nil, []string{"a:1"}), data.NewField("state", nil, []string{"down"}))
	q := &scripted{answers: []backend.DataResponse{{Frames: data.Frames{table}}, {Error: errors.New("boom")}}}
	f := c.Tick(q)(context.Background(), time.Now())
	require.Equal(t, "fleet", f.Name)
	require.Equal(t, "down", f.Fields[1].At(0))
	f = c.Tick(q)(context.Background(), time.Now())
	require.Equal(t, "boom", f.Meta.Notices[0].Text)
}
