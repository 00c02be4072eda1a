package live

import "github.com/prometheus/client_golang/prometheus"

// The plugin's own live metrics, on the default registry that the SDK
// serves through CollectMetrics (Grafana's /api/plugins/<id>/metrics), so
// an operator sees what the channels cost: one tick is one query.
var (
	liveTicks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "vllm_datasource", Subsystem: "live", Name: "ticks_total",
		Help: "Live channel ticks, one data-source query each, by channel kind and result (ok or error).",
	}, []string{"kind", "result"})
	liveChannels = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "vllm_datasource", Subsystem: "live", Name: "channels",
		Help: "Live channel loops running now (one per channel and identity, however many subscribers).",
	})
)

func init() {
	prometheus.MustRegister(liveTicks, liveChannels)
}
