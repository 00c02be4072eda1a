//go:build !mutation

package query_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// quantileSettings scope the data source to the pod-labelled cluster,
// where every pod holds one recorded series per group: the recorded
// quantiles answer exactly there.
const quantileSettings = `,"instanceLabel":"pod","selector":"cluster=\"b\""`

// vmQuantileSettings are quantileSettings without the wedged pod, for
// VictoriaMetrics' waitTime ranges: there the wedged pod's recorded
// quantile or mean (vmalert's) still answers at steps where its raw twin
// has none (the known gap vmIdleP99 describes, logged by the pair
// comparison), and a range compares whole series.
const vmQuantileSettings = `,"instanceLabel":"pod","selector":"cluster=\"b\",pod!=\"vllm-1\""`

// checkWaitQuantiles asks waitTime by pod and by pod and engine on the
// pod-labelled cluster: the quantiles read the recorded per-server and
// per-engine quantiles, and each part equals its raw twin at the rules'
// evaluation times (checkRuleCase). On both clusters the pod-less servers
// share pod="" (a recorded quantile cannot sum them), so the plan reads
// the recorded bucket rates, exactly too.
func checkWaitQuantiles(t *testing.T, url string, from, to time.Time) {
	cases := []struct {
		c    ruleCase
		want []string
	}{
		{ruleCase{"queue time by pod", `{"queryType":"waitTime","grouping":"instance"}`, quantileSettings, true},
			[]string{"engine:vllm_request_queue_time_seconds:server_p50_rate1m", "engine:vllm_request_queue_time_seconds:server_p99_rate1m"}},
		{ruleCase{"ttft by pod and engine", `{"queryType":"waitTime","family":"ttft","quantiles":[0.5,0.99],"grouping":"instance_engine"}`, quantileSettings, true},
			[]string{"engine:vllm_time_to_first_token_seconds:p50_rate1m", "engine:vllm_time_to_first_token_seconds:p99_rate1m"}},
		{ruleCase{"ttft by pod, both clusters: the bucket rates", `{"queryType":"waitTime","family":"ttft","grouping":"instance"}`, `,"instanceLabel":"pod"`, true},
			[]string{"engine:vllm_time_to_first_token_seconds_bucket:rate1m"}},
	}
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			scoped := tc.c.settings == quantileSettings
			if scoped && vmIdleP99 {
				tc.c.settings = vmQuantileSettings
			}
			ex := checkRuleCase(t, url, tc.c, from, to)
			for _, w := range tc.want {
				require.Contains(t, ex, w)
			}
			if !scoped {
				require.NotContains(t, ex, ":server_p")
			} else {
				require.NotContains(t, ex, "_bucket")
			}
		})
	}
}

// checkWaitQuantilePairs: each recorded quantile (per server, per engine)
// read by its grouping equals the raw histogram_quantile over the summed
// bucket rates at the rules' latest evaluation, at three instants, for
// both windows and both families.
func checkWaitQuantilePairs(t *testing.T, c *prom.Client, url string, at time.Time) {
	s, err := models.ParseSettings(models.Instance{URL: url, JSONData: []byte(`{"scrapeInterval":"1s"` + quantileSettings + `}`)})
	require.NoError(t, err)
	b := vllm.ForSettings(s)
	compared, finite := 0, 0
	for _, g := range []models.Grouping{models.GroupInstance, models.GroupInstanceEngine} {
		pairs := b.WaitQuantilePairs("engine:", g, models.Filters{})
		require.Len(t, pairs, 16)
		for _, p := range pairs {
			for _, ts := range []time.Time{at, at.Add(-7 * time.Second), at.Add(-23 * time.Second)} {
				lag := ruleLag(t, c, p.Rules, ts)
				got, _, err := c.Query(context.Background(), p.Rules, ts)
				require.NoError(t, err)
				want, _, err := c.Query(context.Background(), p.Raw, ts.Add(-lag))
				require.NoError(t, err)
				if vmIdleP99 {
					got = withoutIdle(t, want, got, p.Rules)
				}
				compared += requireSameVector(t, want, got, p.Rules)
				for _, v := range got {
					if v.Value == v.Value && v.Value > 0 {
						finite++
					}
				}
			}
		}
	}
	require.Positive(t, compared, "some values compared")
	require.Positive(t, finite, "some quantiles are numbers")
}
