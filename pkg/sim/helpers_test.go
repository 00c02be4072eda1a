package sim

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// testEpoch fixes the wall mapping so expositions are reproducible.
var testEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestFleet builds a fleet from DefaultConfig with the given instances,
// after letting mutate adjust the config.
func newTestFleet(t testing.TB, mutate func(*Config), insts ...InstanceConfig) *Fleet {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Epoch = testEpoch
	cfg.Instances = insts
	if mutate != nil {
		mutate(&cfg)
	}
	f, err := NewFleet(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, f.Close()) })
	return f
}

// scraped is one parsed exposition.
type scraped struct {
	text     string
	families map[string]*familyView
}

// familyView is a parsed family, reduced to what the tests compare.
type familyView struct {
	typ    string // GAUGE, COUNTER, HISTOGRAM
	series []seriesView
}

type seriesView struct {
	labels  map[string]string
	value   float64   // gauge or counter
	count   uint64    // histogram
	sum     float64   // histogram
	bounds  []float64 // histogram upper bounds, without +Inf
	buckets []uint64  // cumulative counts, matching bounds
	inf     uint64    // the +Inf bucket
}

// key identifies a series across scrapes.
func (s seriesView) key(family string) string {
	names := make([]string, 0, len(s.labels))
	for k := range s.labels {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(family)
	for _, k := range names {
		b.WriteString("|" + k + "=" + s.labels[k])
	}
	return b.String()
}

// scrape renders one instance and parses it with Prometheus's own parser.
func scrape(t testing.TB, f *Fleet, instance int) scraped {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, f.WriteMetrics(&buf, instance))
	return parseExposition(t, buf.String())
}

func parseExposition(t testing.TB, text string) scraped {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	out := scraped{text: text, families: map[string]*familyView{}}
	for name, mf := range mfs {
		fv := &familyView{typ: mf.GetType().String()}
		for _, m := range mf.GetMetric() {
			sv := seriesView{labels: map[string]string{}}
			for _, lp := range m.GetLabel() {
				sv.labels[lp.GetName()] = lp.GetValue()
			}
			sv.value = m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
			if h := m.GetHistogram(); h != nil {
				sv.count, sv.sum = h.GetSampleCount(), h.GetSampleSum()
				for _, b := range h.GetBucket() {
					if math.IsInf(b.GetUpperBound(), 1) {
						sv.inf = b.GetCumulativeCount()
						continue
					}
					sv.bounds = append(sv.bounds, b.GetUpperBound())
					sv.buckets = append(sv.buckets, b.GetCumulativeCount())
				}
			}
			fv.series = append(fv.series, sv)
		}
		out.families[name] = fv
	}
	return out
}

// value returns the value of the one series of family whose labels include
// match, failing when there is not exactly one.
func (s scraped) value(t testing.TB, family string, match map[string]string) float64 {
	t.Helper()
	fv, ok := s.families[family]
	require.True(t, ok, "family %s missing", family)
	var found []seriesView
	for _, sv := range fv.series {
		if labelsMatch(sv.labels, match) {
			found = append(found, sv)
		}
	}
	require.Len(t, found, 1, "series of %s with %v", family, match)
	return found[0].value
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
