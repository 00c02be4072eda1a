package frames

import "github.com/grafana/grafana-plugin-sdk-go/data"

// AppendNotices is f with n added after frame 0's notices: the one change
// made to an answer's frames after they are built, for what a request
// learns only once every query has run (the stores a Thanos Query could
// not reach). Frame 0 gets a copy of its meta, so nothing else that holds
// the old meta sees the change.
func AppendNotices(f data.Frames, n []data.Notice) data.Frames {
	if len(n) == 0 || len(f) == 0 {
		return f
	}
	meta := data.FrameMeta{}
	if f[0].Meta != nil {
		meta = *f[0].Meta
	}
	meta.Notices = append(append([]data.Notice(nil), meta.Notices...), n...)
	f[0].Meta = &meta
	return f
}
