package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAdmissionLimits: --max-num-queued-reqs and --max-num-queued-tokens
// refuse arrivals as vLLM's check_admission does, the truth counts each
// refusal once by reason, and a 0.32 instance's admission_rejections_total
// shows exactly the truth, summed over its ranks, without an engine label.
func TestAdmissionLimits(t *testing.T) {
	tests := []struct {
		name          string
		reqs, tokens  int
		release       string
		wantReason    string // "" when nothing may be refused
		wantExposed   bool
		checkInFlight bool
	}{
		{"request limit", 12, 0, Release032, "max_num_queued_reqs", true, true},
		{"token limit", 0, 3000, Release032, "max_num_queued_tokens", true, false},
		{"limits that never bind", 1 << 30, 1 << 30, Release032, "", true, false},
		{"limit on an older V1 refuses but shows nothing", 12, 0, "", "max_num_queued_reqs", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFleet(t, func(c *Config) {
				c.Rate = 20
				c.Engine.MaxNumSeqs = 8
				c.Engine.MaxNumQueuedReqs, c.Engine.MaxNumQueuedTokens = tt.reqs, tt.tokens
			}, InstanceConfig{Model: "m", Engines: 2, Release: tt.release})
			for range 60 {
				require.NoError(t, f.Advance(time.Second))
				for _, e := range f.Snapshot().Engines {
					if tt.checkInFlight {
						require.LessOrEqual(t, e.Waiting+e.Running, tt.reqs, "rank %d in flight", e.Engine)
					}
				}
			}
			truth := map[string]int64{}
			for _, e := range f.Snapshot().Engines {
				for reason, n := range e.AdmissionRejected {
					truth[reason] += n
				}
			}
			for _, reason := range admissionReasons {
				if reason == tt.wantReason {
					require.Positive(t, truth[reason], reason)
				} else {
					require.Zero(t, truth[reason], reason)
				}
			}
			got := scrape(t, f, 0)
			fv, ok := got.families["vllm:admission_rejections_total"]
			require.Equal(t, tt.wantExposed, ok)
			if !ok {
				return
			}
			require.Len(t, fv.series, len(admissionReasons))
			for _, sv := range fv.series {
				require.NotContains(t, sv.labels, "engine")
				require.Equal(t, float64(truth[sv.labels["reason"]]), sv.value, sv.labels["reason"])
			}
		})
	}
}

// TestAdmissionLimitsKeepTheRandomStream: limits that never fire change
// nothing else, so existing fleets and goldens stay as they were.
func TestAdmissionLimitsKeepTheRandomStream(t *testing.T) {
	run := func(reqs, tokens int) string {
		f := newTestFleet(t, func(c *Config) {
			c.Rate = 20
			c.Engine.MaxNumQueuedReqs, c.Engine.MaxNumQueuedTokens = reqs, tokens
		}, InstanceConfig{Model: "m"})
		require.NoError(t, f.Advance(time.Minute))
		var buf bytes.Buffer
		require.NoError(t, f.WriteMetrics(&buf, 0))
		return buf.String()
	}
	require.Equal(t, run(0, 0), run(1<<30, 1<<30))
}

// TestRequestNumPreemptions: the per-request histogram observes every
// finished request's true preemption count, never-preempted ones in le=1.
func TestRequestNumPreemptions(t *testing.T) {
	f := newTestFleet(t, func(c *Config) {
		c.Rate, c.RequestLog = 0.7, 100000
		tinyKV(&c.Engine)
	}, InstanceConfig{Model: "m", Release: Release032})
	require.NoError(t, f.Advance(20*time.Minute))
	var finished, sum, atMostOne, moreThanFive uint64
	for _, r := range f.CompletedRequests() {
		if r.ClientAborted {
			continue
		}
		finished++
		sum += uint64(r.Preemptions)
		if r.Preemptions <= 1 {
			atMostOne++
		}
		if r.Preemptions > 5 {
			moreThanFive++
		}
	}
	require.Positive(t, finished-atMostOne, "some requests were preempted more than once")
	fv := scrape(t, f, 0).families["vllm:request_num_preemptions"]
	require.NotNil(t, fv)
	require.Len(t, fv.series, 1)
	h := fv.series[0]
	require.Equal(t, numPreemptionsBuckets, h.bounds)
	require.Equal(t, finished, h.count)
	require.Equal(t, float64(sum), h.sum)
	require.Equal(t, atMostOne, h.buckets[0], "le=1")
	require.Equal(t, finished-moreThanFive, h.buckets[4], "le=5")
}

// TestReleaseValidation: only "" and "0.32", and only for V1.
func TestReleaseValidation(t *testing.T) {
	for _, ic := range []InstanceConfig{{Model: "m", Release: "0.31"}, {Model: "m", Generation: V0, Release: Release032}} {
		cfg := DefaultConfig()
		cfg.Instances = []InstanceConfig{ic}
		_, err := NewFleet(cfg)
		require.ErrorIs(t, err, ErrInvalidConfig)
	}
	cfg := DefaultConfig()
	cfg.Engine.MaxNumQueuedReqs = -1
	cfg.Instances = []InstanceConfig{{Model: "m"}}
	_, err := NewFleet(cfg)
	require.ErrorIs(t, err, ErrInvalidConfig)
}
