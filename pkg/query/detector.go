package query

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// DetectionTTL is how long detected metric names are trusted; vLLM upgrades
// roll out over minutes, so a few minutes is fresh enough and spares
// Prometheus a label-values call per query.
const DetectionTTL = 5 * time.Minute

// detectionLookback bounds the name search to recent series.
const detectionLookback = time.Hour

// Detector caches which vLLM metric names one data source's Prometheus has.
type Detector struct {
	prom Prometheus
	b    vllm.Builder
	now  func() time.Time

	mu      sync.Mutex
	det     vllm.Detection
	fetched time.Time

	// bounds keeps the histogram bucket bounds the store has (Bounds).
	bounds boundsCache
}

// NewDetector returns a detector for the prefix over every series.
func NewDetector(p Prometheus, prefix string, now func() time.Time) *Detector {
	return NewScopedDetector(p, prefix, nil, now)
}

// NewScopedDetector returns a detector for the prefix that looks only at
// series inside the data source's scope (its selector; nil: everything).
func NewScopedDetector(p Prometheus, prefix string, scope []*labels.Matcher, now func() time.Time) *Detector {
	return &Detector{prom: p, b: vllm.Builder{Prefix: prefix, Scope: scope}, now: now}
}

// NewDetectorFor returns a detector for every prefix of the builder (a
// profile can accept several), inside its scope.
func NewDetectorFor(p Prometheus, b vllm.Builder, now func() time.Time) *Detector {
	return &Detector{prom: p, b: vllm.Builder{Prefix: b.Prefix, Prefixes: b.Prefixes, Scope: b.Scope,
		InstanceLabel: b.InstanceLabel, Identity: b.Identity, RoleLabel: b.RoleLabel}, now: now}
}

// Get returns the cached detection, refreshing it when stale. When
// Prometheus cannot answer it returns an empty detection (queries then union
// every name) and does not cache, so the next query tries again.
func (d *Detector) Get(ctx context.Context) vllm.Detection {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if !d.fetched.IsZero() && now.Sub(d.fetched) < DetectionTTL {
		return d.det
	}
	b := d.probe(ctx, now)
	names, err := d.prom.MetricNames(ctx, b.NameSelector(), now.Add(-detectionLookback), now)
	if err != nil {
		return vllm.Detection{}
	}
	det := d.probeContainers(ctx, b, b.Detected.WithNames(names, b.PrefixList()), now)
	d.det, d.fetched = d.probeRoles(ctx, b, det, now), now
	return d.det
}

// probeRoles asks whether any running series in scope carries a role
// label (vllm.Builder.RoleProbeSelectors), once per refresh, so that the
// fleet table's role column is not asked of a fleet without roles. A
// failed probe, or a role label read from target_info, leaves it unknown:
// the column is then asked for, as before.
func (d *Detector) probeRoles(ctx context.Context, b vllm.Builder, det vllm.Detection, now time.Time) vllm.Detection {
	b.Detected = det
	sels, ok := b.RoleProbeSelectors()
	if !ok {
		return det
	}
	for _, sel := range sels {
		names, err := d.prom.MetricNames(ctx, sel, now.Add(-detectionLookback), now)
		if err != nil {
			return det
		}
		if len(names) > 0 {
			return det.WithRoles(true)
		}
	}
	return det.WithRoles(false)
}

// probeContainers asks which cAdvisor families the container columns read
// the store has (vllm.ContainerNamesSelector), once per refresh. A failed
// probe leaves them unknown: the columns are then asked for, as before.
func (d *Detector) probeContainers(ctx context.Context, b vllm.Builder, det vllm.Detection, now time.Time) vllm.Detection {
	names, err := d.prom.MetricNames(ctx, b.ContainerNamesSelector(), now.Add(-detectionLookback), now)
	if err != nil {
		return det
	}
	return det.WithContainerNames(names)
}

// probe asks, where labels beyond the instance are needed, whether they
// are on the series or only on target_info (an OTLP-fed store), and
// returns the builder with the join planned. A failed probe plans none:
// the queries then read the series as they are.
func (d *Detector) probe(ctx context.Context, now time.Time) vllm.Builder {
	if !d.b.Probes() {
		return d.b
	}
	v, _, err := d.prom.Query(ctx, d.b.ResourceProbe(), now)
	if err != nil {
		return d.b
	}
	return d.b.WithProbe(v)
}

// Invalidate forgets the cache; the health check calls it so "Save & test"
// after a vLLM upgrade takes effect at once.
func (d *Detector) Invalidate() {
	d.mu.Lock()
	d.fetched = time.Time{}
	d.mu.Unlock()
	d.bounds.forget()
}
