//go:build !mutation

package query_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
)

// kserveTwinScrapes is a backfilled history of a KServe namespace as
// OpenDataHub's controller scrapes it: every engine of the service twice,
// once by <svc>-kserve-llmisvc-engine, which renames its series kserve_*,
// and once by the -default twin under vLLM's own names; plus a pod that
// only the admin's own PodMonitor scrapes (plain names, job ai/vllm).
func kserveTwinScrapes() []omFamily {
	type pod struct {
		name             string
		waiting, running float64
		twice            bool
	}
	pods := []pod{{"vllm-0", 3, 5, true}, {"vllm-1", 2, 4, true}, {"vllm-2", 7, 1, false}}
	var fams []omFamily
	for _, signal := range []string{"num_requests_waiting", "num_requests_running"} {
		plain := omFamily{name: "vllm:" + signal, typ: "gauge"}
		renamed := omFamily{name: "kserve_vllm:" + signal, typ: "gauge"}
		for _, p := range pods {
			v := p.waiting
			if signal == "num_requests_running" {
				v = p.running
			}
			value := func(time.Time) float64 { return v }
			lbl := func(job string) string {
				return fmt.Sprintf(`namespace="ai",pod="%s",model_name="m",engine="0",job="%s"`, p.name, job)
			}
			if !p.twice {
				plain.series = append(plain.series, omSeries{name: plain.name, labels: lbl("ai/vllm"), value: value})
				continue
			}
			renamed.series = append(renamed.series, omSeries{name: renamed.name, labels: lbl("ai/llama-kserve-llmisvc-engine"), value: value})
			plain.series = append(plain.series, omSeries{name: plain.name, labels: lbl("ai/llama-kserve-llmisvc-engine-default"), value: value})
		}
		fams = append(fams, plain, renamed)
	}
	return fams
}

// TestKServeTwinScrapesCountOnce: under the kserve profile an engine
// scraped under both names (kserve_vllm: and vllm:) counts once, and a pod
// scraped only under vLLM's names still counts. A plain "or" across the two
// prefixes kept both copies (their jobs differ), so the fleet's waiting
// read 3+3+2+2+7 = 17 instead of 12.
func TestKServeTwinScrapesCountOnce(t *testing.T) {
	t.Parallel()
	step := 15 * time.Second
	at := time.Now().Truncate(time.Minute).Add(-time.Minute)
	start := at.Add(-30 * time.Minute)
	srv := backfilled(t, promtest.Prometheus2, kserveTwinScrapes(), start, at.Add(5*time.Minute), step)
	e := settingsExecutor(t, srv.URL, `{"scrapeInterval":"15s","profile":"kserve"}`)
	q := func(js string) map[string]float64 {
		r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), Interval: step, MaxDataPoints: 1000,
			TimeRange: backend.TimeRange{From: at.Add(-10 * time.Minute), To: at}}).Responses["A"]
		require.NoError(t, r.Error)
		out := map[string]float64{}
		for name, f := range byName(r.Frames) {
			_, v := lastValue(t, f)
			out[name] = v
		}
		return out
	}
	require.Equal(t, map[string]float64{"running": 10, "waiting": 12}, q(`{"queryType":"queue","grouping":"none"}`))
	require.Equal(t, map[string]float64{
		"ai/vllm-0 running": 5, "ai/vllm-0 waiting": 3, "ai/vllm-1 running": 4, "ai/vllm-1 waiting": 2,
		"ai/vllm-2 running": 1, "ai/vllm-2 waiting": 7,
	}, q(`{"queryType":"queue","grouping":"instance"}`))
}
