package query

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// ProfileTTL is how long the stack that auto resolved to is trusted: a
// data source rarely changes stacks, and a few minutes spares Prometheus
// two calls per query.
const ProfileTTL = DetectionTTL

// profileRetry is how long after a failed stack lookup the next one waits:
// queries queue behind a lookup, and a Prometheus that does not answer
// must not cost each of them a timeout.
const profileRetry = 10 * time.Second

// Resolved is a data source's settings under its profile as resolved,
// with the name detector for that profile's prefixes.
type Resolved struct {
	Settings models.Settings
	Detector *Detector
}

// Profiles resolves one data source's profile: an explicit profile as
// set; auto to the profile of the stack that detection finds in the data
// source's scope (plain Prometheus where it finds none), cached for
// ProfileTTL. Queries, resource routes and the health check all ask it, so
// all three read the fleet through the same profile.
type Profiles struct {
	prom Prometheus
	base models.Settings
	now  func() time.Time

	mu        sync.Mutex
	cur       models.Settings
	fetched   time.Time
	resolved  bool      // detection has answered at least once
	failed    time.Time // when the last lookup failed
	detectors map[string]*Detector
}

// NewProfiles returns the resolver for the data source's settings.
func NewProfiles(p Prometheus, s models.Settings, now func() time.Time) *Profiles {
	return &Profiles{prom: p, base: s, now: now, cur: s, detectors: map[string]*Detector{}}
}

// Resolve returns the settings under the resolved profile. When detection
// fails it keeps the last resolution (or plain Prometheus before the
// first) and tries again profileRetry later.
func (r *Profiles) Resolve(ctx context.Context) Resolved {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.base.AutoProfile && r.stale(r.now()) {
		r.refresh(ctx)
	}
	return Resolved{Settings: r.cur, Detector: r.detectorFor(r.cur)}
}

// stale: never resolved or resolved ProfileTTL ago, and no lookup failed
// within profileRetry.
func (r *Profiles) stale(now time.Time) bool {
	if !r.failed.IsZero() && now.Sub(r.failed) < profileRetry {
		return false
	}
	return r.fetched.IsZero() || now.Sub(r.fetched) >= ProfileTTL
}

// refresh runs stack detection and applies the profile it points to.
func (r *Profiles) refresh(ctx context.Context) {
	now := r.now()
	st, err := r.detect(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			r.failed = now // Prometheus failed, not the caller who gave up
		}
		if !r.resolved {
			r.cur, _ = r.base.WithProfile(models.ProfilePrometheus, fmt.Sprintf("stack detection failed: %v", err))
		}
		return
	}
	name, why := st.Profile, st.Name+": "+st.Evidence
	if name == "" {
		name, why = models.ProfilePrometheus, fmt.Sprintf("%s (%s), no stack recognised", st.Name, st.Evidence)
	}
	cur, err := r.base.WithProfile(name, why)
	if err != nil {
		return // a stack without a profile: a bug in the table, caught by tests
	}
	r.cur, r.fetched, r.resolved, r.failed = cur, now, true, time.Time{}
}

// detect asks Prometheus for the names and label shapes inside the data
// source's scope and names the stack they point to.
func (r *Profiles) detect(ctx context.Context, now time.Time) (vllm.Stack, error) {
	b := vllm.Builder{Scope: r.base.Selector}
	names, err := r.prom.MetricNames(ctx, b.StackNamesSelector(), now.Add(-detectionLookback), now)
	if err != nil {
		return vllm.Stack{}, fmt.Errorf("list stack metric names: %w", err)
	}
	shapes, _, err := r.prom.Query(ctx, b.StackShapesExpr(), now)
	if err != nil {
		return vllm.Stack{}, fmt.Errorf("read stack label shapes: %w", err)
	}
	return vllm.ClassifyStack(names, shapes), nil
}

// detectorFor is the name detector of the settings' prefixes, one per
// profile so a change of stack never serves another prefix's names.
func (r *Profiles) detectorFor(s models.Settings) *Detector {
	d, ok := r.detectors[s.Profile]
	if !ok {
		d = NewDetectorFor(r.prom, vllm.ForSettings(s), r.now)
		r.detectors[s.Profile] = d
	}
	return d
}

// Invalidate forgets the resolved stack and every detected name set; the
// health check calls it so "Save & test" sees the fleet as it is now.
func (r *Profiles) Invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetched, r.failed = time.Time{}, time.Time{}
	for _, d := range r.detectors {
		d.Invalidate()
	}
}
