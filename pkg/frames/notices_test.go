package frames

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
)

// TestAppendNotices: notices join frame 0's meta without replacing what it
// already says, a frame without meta gets one, and the meta the frame held
// before is left as it was.
func TestAppendNotices(t *testing.T) {
	n := []data.Notice{{Text: "new"}}
	old := &data.FrameMeta{ExecutedQueryString: "q", Notices: []data.Notice{{Text: "old"}}}
	with := AppendNotices(data.Frames{data.NewFrame("a").SetMeta(old)}, n)
	require.Equal(t, "q", with[0].Meta.ExecutedQueryString)
	require.Equal(t, []data.Notice{{Text: "old"}, {Text: "new"}}, with[0].Meta.Notices)
	require.Equal(t, []data.Notice{{Text: "old"}}, old.Notices, "the earlier meta is not edited")

	without := AppendNotices(data.Frames{data.NewFrame("b")}, n)
	require.Equal(t, n, without[0].Meta.Notices)
	require.Empty(t, AppendNotices(nil, n))
	require.Nil(t, AppendNotices(data.Frames{data.NewFrame("c")}, nil)[0].Meta)
}
