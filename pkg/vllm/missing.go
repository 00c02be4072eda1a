package vllm

import (
	"fmt"
	"strings"
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
