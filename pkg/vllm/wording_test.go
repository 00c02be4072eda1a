package vllm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWordingMatchesVLLM: the texts say what vLLM observes: token gaps for
// inter-token latency, first queued to first scheduled and only at finish
// for queue time, nothing for client-aborted requests.
func TestWordingMatchesVLLM(t *testing.T) {
	tests := []struct {
		name, got string
		want      []string
		not       []string
	}{
		{"itl quantiles", LatencyText(ITL, false), []string{"per gap between two tokens", "not of requests"}, nil},
		{"queue time", LatencyText(QueueTime, false), []string{"first queueing to its first scheduling", "only when the request finishes", "Turn on live"}, nil},
		{"queue time with live", LatencyText(QueueTime, true), []string{"only when the request finishes"}, []string{"Turn on live"}},
		{"request latency after aborts", LatencyText(E2E, false), []string{"client aborted", "only the requests that finished"}, nil},
		{"live wait", LiveWaitText(), []string{"Little's law", "when requests finish"}, nil},
		{"itl attainment", AttainmentText(ITL), []string{"share of token gaps", "not the share of requests"}, nil},
		{"ttft attainment", AttainmentText(TTFT), []string{"share of finished requests", "client aborted"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				require.Contains(t, tt.got, w)
			}
			for _, w := range tt.not {
				require.NotContains(t, tt.got, w)
			}
		})
	}
}
