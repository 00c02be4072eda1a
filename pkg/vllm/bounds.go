package vllm

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// Bounds are the finite upper bounds of one latency histogram as the store
// holds them. vLLM's lists are defaults: an operator can replace them
// (ObservabilityConfig.custom_histogram_buckets), so a query that picks a
// bucket reads the bounds the selected series carry and uses the defaults
// only when the store cannot say.
type Bounds struct {
	// Values are the bounds, ascending, each once.
	Values []float64
	// Spellings holds every le value seen for a bound ("1" and "1.0":
	// Prometheus 2 keeps what it scraped, Prometheus 3 rewrites le to
	// the OpenMetrics float form).
	Spellings map[float64][]string
	// Default is true when Values are vLLM's defaults, not read from the store.
	Default bool
}

// DefaultBounds are vLLM's default bounds of key (LatencyBuckets), for
// when the store cannot be asked.
func DefaultBounds(key SignalKey) Bounds {
	return Bounds{Values: append([]float64(nil), LatencyBuckets[key]...), Default: true}
}

// ParseBounds reads le label values into bounds: +Inf and values that are
// not numbers are skipped, spellings of one number are merged.
func ParseBounds(les []string) Bounds {
	b := Bounds{Spellings: map[float64][]string{}}
	for _, le := range les {
		v, err := strconv.ParseFloat(strings.TrimSpace(le), 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			continue
		}
		if _, seen := b.Spellings[v]; !seen {
			b.Values = append(b.Values, v)
		}
		b.Spellings[v] = append(b.Spellings[v], le)
	}
	sort.Float64s(b.Values)
	return b
}

// Empty reports whether there is no bound at all.
func (bs Bounds) Empty() bool { return len(bs.Values) == 0 }

// Snap returns the bound nearest to threshold (the lower one on a tie: the
// stricter objective) and whether it differs from threshold. With no bound
// at all (a family vLLM has no default list for) it keeps threshold.
func (bs Bounds) Snap(threshold float64) (float64, bool) {
	if bs.Empty() {
		return threshold, false
	}
	best := bs.Values[0]
	for _, b := range bs.Values[1:] {
		if math.Abs(b-threshold) < math.Abs(best-threshold) {
			best = b
		}
	}
	return best, best != threshold
}

// Lowest is the smallest bound, NaN when there is none.
func (bs Bounds) Lowest() float64 {
	if bs.Empty() {
		return math.NaN()
	}
	return bs.Values[0]
}

// Text lists the bounds for notices: "0.001, 0.005, …".
func (bs Bounds) Text() string {
	parts := make([]string, len(bs.Values))
	for i, b := range bs.Values {
		parts[i] = strconv.FormatFloat(b, 'f', -1, 64)
	}
	return strings.Join(parts, ", ")
}

// Le is every spelling of bound an le matcher must accept: both canonical
// forms (LeForms) and whatever the store was seen to hold.
func (bs Bounds) Le(bound float64) []string {
	out := LeForms(bound)
	for _, s := range bs.Spellings[bound] {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// BucketSelector selects the _bucket series of key's histogram under the
// filters, across its wire names and prefixes: the match[] of an le label
// values lookup.
func (b Builder) BucketSelector(key SignalKey, f models.Filters) string {
	return b.nameSetSelector(key, f, "_bucket")
}

// nameSetSelector is {__name__=~"n1<suffix>|n2<suffix>", matchers}.
func (b Builder) nameSetSelector(key SignalKey, f models.Filters, suffix string) string {
	names := b.names(key)
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n + suffix)
	}
	ms := []string{"__name__=~" + quote(strings.Join(names, "|"))}
	if m := b.matchers(f); m != "" {
		ms = append(ms, m)
	}
	return "{" + strings.Join(ms, ", ") + "}"
}

// BoundCoverage are two instant expressions: how many engines of key's
// histogram under the filters carry the bucket bound (in any of the
// spellings le), and how many export the histogram at all. Engines whose
// operators chose other bucket lists lack the bound, and an objective on
// it counts all their requests as over it.
func (b Builder) BoundCoverage(key SignalKey, f models.Filters, le []string) (carriers, total string) {
	el := b.EngineLabels()
	with := f
	with.Labels = append(append(with.Labels[:0:0], f.Labels...), leMatcherOf(le))
	carriers = "count(" + agg("group", el, b.nameSetSelector(key, with, "_bucket")) + ")"
	total = "count(" + agg("group", el, b.nameSetSelector(key, f, "_count")) + ")"
	return carriers, total
}
