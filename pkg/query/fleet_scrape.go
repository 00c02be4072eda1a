package query

import (
	"math"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// serverScrape is what Prometheus' own series say of one server's scrapes
// (vllm.FleetScrapeSignals): nil where it has no such series (a store
// that drops them, a federated or remote-written fleet).
type serverScrape struct {
	up, changes, seconds *float64
	// timeout is the scrape timeout in seconds: scrape_timeout_seconds
	// where Prometheus stores it, else the assumed one (never 0).
	timeout float64
}

// flapping: up now, and up changed at least vllm.FlapChanges times in the
// range, so at least one scrape failed between two that succeeded.
func (s serverScrape) flapping() bool {
	return s.up != nil && *s.up == 1 && s.changes != nil && *s.changes >= vllm.FlapChanges
}

// timeoutShare is the last scrape's duration over the timeout, or nil
// without a duration.
func (s serverScrape) timeoutShare() *float64 {
	if s.seconds == nil {
		return nil
	}
	share := *s.seconds / s.timeout
	return &share
}

// serverScrapes reads the scrape-health answers by server. A server
// without scrape_timeout_seconds (Prometheus without its extra scrape
// metrics, which is the default) gets the timeout its Prometheus most
// likely uses: 10s capped by the data source's scrape interval.
func (p *plan) serverScrapes(vecs map[string]model.Vector) map[string]serverScrape {
	out := map[string]serverScrape{}
	set := func(name string, put func(s *serverScrape, v float64)) {
		for _, smp := range vecs[name] {
			v := float64(smp.Value)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			key := p.serverOf(smp.Metric)
			s := out[key]
			put(&s, v)
			out[key] = s
		}
	}
	set(vllm.FleetUp, func(s *serverScrape, v float64) { s.up = &v })
	set(vllm.FleetUpChanges, func(s *serverScrape, v float64) { s.changes = &v })
	set(vllm.FleetScrapeDuration, func(s *serverScrape, v float64) { s.seconds = &v })
	set(vllm.FleetScrapeTimeout, func(s *serverScrape, v float64) {
		if v > 0 {
			s.timeout = v
		}
	})
	assumed := models.AssumedScrapeTimeout(p.settings.scrape).Seconds()
	for k, s := range out {
		if s.timeout == 0 {
			s.timeout = assumed
			out[k] = s
		}
	}
	return out
}
