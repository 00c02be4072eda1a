package query_test

import (
	"fmt"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/frames"
	"github.com/inferops/vllm-datasource/pkg/query"
)

// TestSaturationWideFrames: with more groups than the executor's cut-over
// a saturation answer's series and verdict timelines come as one wide
// frame each, holding exactly the value and verdict fields the frames per
// series and per group hold for the same fleet, in the same order and on
// the same times; the table is unchanged; the notices are the same plus
// the one that says so. At the cut-over itself nothing changes.
func TestSaturationWideFrames(t *testing.T) {
	const groups = 4
	for _, format := range []string{"both", "series"} {
		t.Run(format, func(t *testing.T) {
			multi := saturationOn(t, groups, groups, format).Frames
			wide := saturationOn(t, groups, groups-1, format).Frames
			require.Len(t, multi, 4*groups+tableFrames(format))
			require.Len(t, wide, 2+tableFrames(format))
			series, timelines := multi[:3*groups], multi[3*groups:4*groups]
			requireWideOf(t, wide[0], series, data.FrameTypeTimeSeriesWide)
			requireWideOf(t, wide[1], timelines, data.FrameTypeTimeSeriesWide)
			require.Equal(t, "saturation", wide[0].Name)
			require.Equal(t, "saturation verdicts", wide[1].Name)
			require.Equal(t, multi[0].Meta.ExecutedQueryString, wide[0].Meta.ExecutedQueryString)
			require.Equal(t, append(multi[0].Meta.Notices, frames.WideNotice(groups, groups-1)), wide[0].Meta.Notices)
			require.Nil(t, wide[1].Meta.Notices)
			if format == "both" {
				require.Equal(t, multi[len(multi)-1], wide[len(wide)-1], "the table")
			}
		})
	}
}

func tableFrames(format string) int {
	if format == "both" {
		return 1
	}
	return 0
}

// requireWideOf checks that wide holds each of the two-field frames
// perSeries' second field, in order, on their shared first field.
func requireWideOf(t *testing.T, wide *data.Frame, perSeries data.Frames, typ data.FrameType) {
	t.Helper()
	require.Equal(t, typ, wide.Meta.Type)
	require.Equal(t, data.FrameTypeVersion{0, 1}, wide.Meta.TypeVersion)
	require.Len(t, wide.Fields, len(perSeries)+1)
	for i, f := range perSeries {
		require.Len(t, f.Fields, 2)
		require.Equal(t, f.Fields[0], wide.Fields[0], "frame %s's time field", f.Name)
		require.Equal(t, f.Fields[1], wide.Fields[i+1], "field %d is frame %s's", i+1, f.Name)
		require.Equal(t, f.Name, wide.Fields[i+1].Config.DisplayNameFromDS)
	}
}

// TestSaturationWideFramesDefault: the default cut-over is 1,000 groups:
// 1,000 instances still get a frame per series and per instance, 1,001
// two wide frames and the notice.
func TestSaturationWideFramesDefault(t *testing.T) {
	require.Equal(t, 1000, query.DefaultWideAbove)
	at := saturationOn(t, 1000, 0, "series").Frames
	require.Len(t, at, 4000)
	require.NotContains(t, noticeTexts(at), "wide frame")
	above := saturationOn(t, 1001, 0, "series").Frames
	require.Len(t, above, 2)
	require.Len(t, above[0].Fields, 3*1001+1)
	require.Len(t, above[1].Fields, 1001+1)
	require.Contains(t, noticeTexts(above), fmt.Sprintf("%d groups (instances, engines or role pools; more than %d)", 1001, 1000))
}
