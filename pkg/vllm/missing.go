package vllm

import (
	"fmt"
	"strings"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// versionsText is the signal's Versions with the data source's prefix in
// place of vLLM's own.
func (s Signal) versionsText(prefix string) string {
	return strings.ReplaceAll(s.Versions, "vllm:", prefix)
}

// MissingText says that the selected engines export no series of a signal
// a query needs, which vLLM versions and flags export it, and what the
// query shows without it.
func MissingText(key SignalKey, prefix, without string) string {
	s, ok := Lookup(key)
	if !ok {
		return ""
	}
	names := strings.Join(s.WireNames(prefix), " or ")
	return fmt.Sprintf("The selected engines export no %s, which this query needs; %s. It is exported by vLLM (%s) while stats logging is on "+
		"(not with --disable-log-stats); some vLLM builds and imitations do not export it.", names, without, s.versionsText(prefix))
}

// Fallback reports, for a signal renamed between vLLM versions, whether the
// fleet has only the older name, so a query that reads it can say so.
func (d Detection) Fallback(key SignalKey, prefix string) (string, bool) {
	s, ok := Lookup(key)
	if !ok || s.V1 == "" || s.V0 == "" || s.V1 == s.V0 || !d.Found() {
		return "", false
	}
	if d.Names[s.V1] || !d.Names[s.V0] {
		return "", false
	}
	return fmt.Sprintf("Read %s%s for %s: this fleet does not export the newer %s%s (%s).", prefix, s.V0, s.Help, prefix, s.V1, s.versionsText(prefix)), true
}

// NoEngineText is the notice for a selection that matches no vLLM engine.
func NoEngineText(selection string) string {
	if selection == "" {
		return "No vLLM engine reported in this time range: check that Prometheus scrapes the fleet (Save & test says what it finds)."
	}
	return fmt.Sprintf("No vLLM engine matches the selection (%s) in this time range: check the model, instance and engine filters.", selection)
}

// ActivityProbes are two instant expressions over the series of key under
// the filters in the lookback: the most samples any one of them has (no
// answer: the engines export no such series) and their summed increase.
// A histogram is read by its _count series. They tell an absent metric
// from one that exists but gave the query nothing to show.
func (b Builder) ActivityProbes(key SignalKey, f models.Filters, lookback string) (samples, increase string) {
	suffix := ""
	if s, ok := Lookup(key); ok && s.Kind == Histogram {
		suffix = "_count"
	}
	sel := b.nameSetSelector(key, f, suffix) + "[" + lookback + "]"
	return "max(count_over_time(" + sel + "))", "sum(increase(" + sel + "))"
}

// EnginesInRange counts the engines under the filters that reported at any
// time in the lookback before the evaluation time (the running gauge, which
// both generations expose by one name). Each wire name takes its own
// last_over_time, since a range applies only to a plain selector.
func (b Builder) EnginesInRange(f models.Filters, lookback string) string {
	return "count(" + b.lastOverTime(Running, f, lookback) + ")"
}

// Activity is what ActivityProbes found.
type Activity struct {
	// Samples is the most samples one series has in the lookback; 0 when
	// no series exists.
	Samples float64
	// Increase is the series' summed increase over the lookback.
	Increase float64
}

// AbsenceText explains why a query that needs key has nothing to show
// although engines were selected, from what ActivityProbes found over the
// query's range and the rate window (window) before it; "" for a gauge
// that exists. Only when no series exists does it say the engines do not
// export the metric.
func AbsenceText(key SignalKey, prefix, without, window string, a Activity) string {
	s, ok := Lookup(key)
	if !ok {
		return ""
	}
	names := strings.Join(s.WireNames(prefix), " or ")
	rated := s.Kind == Histogram || s.Kind == Counter
	switch {
	case a.Samples == 0:
		return MissingText(key, prefix, without)
	case rated && a.Samples < 2:
		return fmt.Sprintf("The selected engines export %s, but each series has fewer than two samples in this time range and the rate window (%s) before it: "+
			"too little history for a rate (engines that started moments ago, or a rate window under two scrape intervals); %s.", names, window, without)
	case s.Kind == Histogram && a.Increase == 0:
		return fmt.Sprintf("The selected engines export %s, but it recorded nothing in this time range and the rate window (%s) before it: %s; %s.",
			names, window, idleReason(key), without)
	case rated && a.Increase == 0:
		return fmt.Sprintf("The selected engines export %s, but it did not change in this time range and the rate window (%s) before it; %s.", names, window, without)
	case rated:
		return fmt.Sprintf("The selected engines export %s and it changed in this time range, yet this query's answer holds none of it; %s.", names, without)
	}
	return ""
}

// idleReason says when the family records, so an empty histogram reads as
// what it is: an engine with no finished request (idle, or stuck).
func idleReason(key SignalKey) string {
	switch key {
	case ITL:
		return "vLLM records a gap between two tokens of a request, and no request produced a second token (the engines were idle, or stuck)"
	case TTFT:
		return "no request's time to first token was recorded (the engines were idle, or stuck)"
	}
	return "vLLM records it when a request finishes, and none finished (the engines were idle, or stuck)"
}
