package vllm

import (
	"regexp"
	"sort"
)

// Generation is the vLLM engine generation a fleet's metrics come from.
type Generation string

// Generations detection can report.
const (
	GenUnknown Generation = ""
	GenV1      Generation = "V1"
	GenV0      Generation = "V0"
	GenMixed   Generation = "mixed"
)

// Detection is what the metric names in Prometheus say about the fleet.
type Detection struct {
	// Generation is V1, V0, mixed, or unknown when no marker name is present.
	Generation Generation
	// Names holds every vLLM wire name found (histogram families by base
	// name), without the prefix.
	Names map[string]bool
	// TrimmedCounters is true when some counter is stored without its
	// _total (an OTLP pipeline whose receiver trimmed it and whose store
	// adds no suffix): the catalogue then reads that spelling too.
	TrimmedCounters bool
	// OTLP is what the resource probe saw of target_info; Join the labels
	// read from it (otlp.go). Both are zero where nothing was probed.
	OTLP OTLPShape
	Join ResourceJoin
	// Containers is what the cAdvisor probe found (cadvisor.go); zero
	// where nothing was probed.
	Containers ContainerFamilies
	// Roles is what the role probe found (role.go); zero where nothing
	// was probed.
	Roles RoleLabelsFound
}

// Found reports whether any vLLM metric exists at all.
func (d Detection) Found() bool { return len(d.Names) > 0 }

// Has reports whether the base wire name (without prefix) exists.
func (d Detection) Has(base string) bool { return d.Names[base] }

// HasSignal reports whether any wire name of the signal exists.
func (d Detection) HasSignal(key SignalKey) bool {
	s, ok := Lookup(key)
	if !ok {
		return false
	}
	for _, n := range []string{s.V1, s.V1Old, s.V0} {
		if n == "" {
			continue
		}
		if d.Names[n] {
			return true
		}
		if t, ok := trimmedCounter(n); ok && s.Kind == Counter && d.Names[t] {
			return true
		}
	}
	return false
}

// Detect classifies the metric names Prometheus returned for the prefix.
// Names without the prefix are ignored, so callers may pass every name.
func Detect(names []string, prefix string) Detection {
	d := Detection{Names: map[string]bool{}}
	for _, n := range names {
		if base, ok := baseName(n, prefix); ok && base != "" {
			d.Names[base] = true
		}
	}
	d.TrimmedCounters = hasTrimmedCounters(d.Names)
	v1, v0 := d.anyOf(v1Markers), d.anyOf(v0Markers)
	switch {
	case v1 && v0:
		d.Generation = GenMixed
	case v1:
		d.Generation = GenV1
	case v0:
		d.Generation = GenV0
	}
	return d
}

func (d Detection) anyOf(markers []string) bool {
	for _, m := range markers {
		if d.Names[m] {
			return true
		}
	}
	return false
}

// SortedNames returns the detected base names in order, for messages and tests.
func (d Detection) SortedNames() []string {
	out := make([]string, 0, len(d.Names))
	for n := range d.Names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NameMatcherRegex is the anchored regex that selects every metric name with
// the prefix; it is passed as a match[] selector, so the prefix is quoted.
func NameMatcherRegex(prefix string) string {
	return regexp.QuoteMeta(prefix) + ".+"
}
