package vllm

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// RuleIntervalFrom: repeated sample times (a gap of 0) are no interval,
// and of two gaps seen equally often the shorter wins, in either order.
func TestRuleIntervalFromTiesAndRepeats(t *testing.T) {
	cases := []struct {
		name   string
		values []float64
		want   time.Duration
	}{
		{"repeated times are skipped", []float64{0, 0, 0, 15}, 15 * time.Second},
		{"tie, shorter first", []float64{0, 15, 45}, 15 * time.Second},
		{"tie, shorter last", []float64{0, 30, 45}, 15 * time.Second},
		{"more common longer gap wins", []float64{0, 15, 45, 75}, 30 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, RuleIntervalFrom(tc.values))
		})
	}
}

// Without an instance filter the identity labels are not required of the
// recorded series: grouping by model on series recorded per pod (which
// drop instance) is answerable; with an instance filter it is not.
func TestRuleLabelsKeptIdentityOnlyWithInstanceFilter(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rs := RuleSet{PodSeries: true}
	require.Empty(t, b.ruleLabelsKept(rs, RuleQuestion{Grouping: models.GroupModel}))
	require.Equal(t, "the recorded series do not keep the label instance",
		b.ruleLabelsKept(rs, RuleQuestion{Grouping: models.GroupModel, Filters: models.Filters{Instances: []string{"a:8000"}}}))
}

// The recorded quantiles are written in full ("0.99", never rounded).
func TestWaitTimeFromRulesQuantileText(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	rp, ok := b.WaitTimeFromRules("engine:", "queue_time", []float64{0.95, 0.99}, false, models.GroupInstance, models.Filters{}, "1m", RecordedWait{})
	require.True(t, ok)
	for _, q := range []string{"histogram_quantile(0.95, ", "histogram_quantile(0.99, "} {
		require.True(t, strings.Contains(rp.Expr, q), "%s in %s", q, rp.Expr)
	}
}

// nearestFit: a rate window of 0 is no duration, whatever the windows.
func TestNearestFitZeroWindow(t *testing.T) {
	fit := nearestFit(RuleSet{Interval: 15 * time.Second}, RuleQuestion{Step: time.Minute, Window: "0s", Policy: models.RulesNearest})
	require.Equal(t, `the rate window "0s" is not a duration`, fit.Why)
}

// NearestWindow: a rate window at the geometric mean of 1m and 5m (to
// within a nanosecond) is a tie, and a tie goes to the longer window.
func TestNearestWindowTieGoesLonger(t *testing.T) {
	w, ok := NearestWindow(134164078650*time.Nanosecond, time.Second, 0)
	require.True(t, ok)
	require.Equal(t, 5*time.Minute, w)
}
