package query_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// probed answers the engine count and the activity probes of a missing
// signal: samples is the most samples one series has (absent when 0), inc
// their increase. Every range query answers nothing.
func probed(samples, inc float64) *scripted {
	one := func(v float64) model.Vector { return model.Vector{{Value: model.SampleValue(v)}} }
	return &scripted{instant: func(expr string, _ time.Time) model.Vector {
		switch {
		case strings.HasPrefix(expr, "count(last_over_time("):
			return one(3) // three engines are selected
		case strings.HasPrefix(expr, "max(count_over_time(") && samples > 0:
			return one(samples)
		case strings.HasPrefix(expr, "sum(increase(") && samples > 0:
			return one(inc)
		}
		return model.Vector{}
	}}
}

// TestMissingNoticeIsTrue: an empty answer while engines are selected says
// the engines "export no" metric only when no series of it exists; when it
// exists the notice says why there is nothing: no request finished (idle
// or stuck engines), or too little history for the rate window.
func TestMissingNoticeIsTrue(t *testing.T) {
	to := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		js       string
		p        *scripted
		want     []string
		dontWant []string
	}{
		{name: "absent", js: `{"queryType":"waitTime"}`, p: probed(0, 0),
			want: []string{"export no vllm:request_queue_time_seconds"}},
		{name: "idle or stuck engines", js: `{"queryType":"waitTime"}`, p: probed(240, 0),
			want:     []string{"export vllm:request_queue_time_seconds, but it recorded nothing", "none finished (the engines were idle, or stuck)"},
			dontWant: []string{"export no"}},
		{name: "a fleet younger than the rate window", js: `{"queryType":"slo","family":"ttft"}`, p: probed(1, 0),
			want:     []string{"fewer than two samples", "too little history for a rate"},
			dontWant: []string{"export no"}},
		{name: "inter-token gaps", js: `{"queryType":"waitTime","family":"itl"}`, p: probed(30, 0),
			want: []string{"no request produced a second token"}, dontWant: []string{"export no"}},
		{name: "exists and changed: no guess", js: `{"queryType":"waitTime"}`, p: probed(30, 5),
			dontWant: []string{"export no", "recorded nothing", "too little history"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, scriptedExecutor(tt.p), dq("A", tt.js, to.Add(-time.Hour), to)).Responses["A"]
			require.NoError(t, r.Error)
			text := noticeTexts(r.Frames)
			for _, w := range tt.want {
				require.Contains(t, text, w)
			}
			for _, w := range tt.dontWant {
				require.NotContains(t, text, w)
			}
		})
	}
}
