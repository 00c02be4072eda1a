package models

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// QuerySLO answers a latency or availability objective: attainment, error
// budget left and multi-window burn rates.
const QuerySLO QueryType = "slo"

// Objective kinds: a latency objective counts requests under a threshold of
// a latency histogram; an availability objective counts finished requests
// that did not end in error (vllm:request_success_total's finished_reason).
const (
	SLOLatency      = "latency"
	SLOAvailability = "availability"
)

// SLOObjectives are the objective kinds, the default first.
var SLOObjectives = []string{SLOLatency, SLOAvailability}

// SLOFamilies are the latency histograms an objective can be set on.
var SLOFamilies = []string{"ttft", "itl", "e2e", "queue_time"}

// SLOSignals are the series an slo query can return, in order; the
// burn-rate pairs are the SRE workbook's (long/short window).
var SLOSignals = []string{"attainment", "error_budget_left", "burn_1h_5m", "burn_6h_30m", "burn_1d_2h", "burn_3d_6h"}

// SLO defaults: a 1 s threshold is a bucket bound of every SLO family's
// default list, so a new query on an unchanged vLLM shows data at once
// without a snap notice (replaced bucket lists snap it to their own).
const (
	DefaultSLOFamily    = "ttft"
	DefaultSLOThreshold = 1.0
	DefaultSLOTarget    = 0.99
	// DefaultAvailabilityTarget is three nines: errors are rarer than slow
	// requests, and 99% would let one request in a hundred fail.
	DefaultAvailabilityTarget = 0.999
	DefaultSLOWindow          = "28d"
	// MaxSLOThreshold is above every default latency bucket of vLLM
	// (7680 s); a higher threshold snaps to the store's highest bound.
	MaxSLOThreshold = 1e5
	MinSLOWindow    = time.Hour
	MaxSLOWindow    = 366 * 24 * time.Hour
)

// SLO is one objective over Window: for a latency objective, Target of the
// requests of Family finish under Threshold seconds; for an availability
// objective, Target of the finished requests do not end in error (Family
// and Threshold are then unused and left empty).
type SLO struct {
	// Objective is SLOLatency or SLOAvailability.
	Objective string
	Family    string
	Threshold float64
	Target    float64
	// Window is the compliance window as written ("28d"); WindowDuration is it parsed.
	Window         string
	WindowDuration time.Duration
	// Signals limits the answer to some of SLOSignals (an alert rule on
	// one burn-rate pair); empty means all.
	Signals []string
}

// sloRaw is the slo query's own JSON; numbers may arrive as strings from
// template variables.
type sloRaw struct {
	Threshold json.RawMessage `json:"threshold"`
	Target    json.RawMessage `json:"target"`
	Window    string          `json:"window"`
	Signals   []string        `json:"signals"`
	Objective string          `json:"objective"`
}

func (q *Query) parseSLO(raw rawQuery, js []byte) error {
	var r sloRaw
	if err := json.Unmarshal(js, &r); err != nil {
		return invalid("malformed slo options: %v", err)
	}
	if raw.Grouping == "" {
		q.Grouping = GroupModel // an objective is usually a model's promise
	}
	q.SLO.Objective = r.Objective
	if q.SLO.Objective == "" {
		q.SLO.Objective = SLOLatency
	}
	if err := oneOf("objective", q.SLO.Objective, SLOObjectives); err != nil {
		return err
	}
	defTarget := DefaultAvailabilityTarget
	if q.SLO.Objective == SLOLatency {
		if err := q.parseSLOLatency(raw.Family, r.Threshold); err != nil {
			return err
		}
		defTarget = DefaultSLOTarget
	}
	var err error
	if q.SLO.Target, err = number("target", r.Target, defTarget); err != nil {
		return err
	}
	if !(q.SLO.Target > 0 && q.SLO.Target < 1) {
		return invalid("target %v is out of range (0, 1); write 99%% as 0.99", q.SLO.Target)
	}
	for _, sig := range r.Signals {
		if err := oneOf("signals", sig, SLOSignals); err != nil {
			return err
		}
	}
	q.SLO.Signals = r.Signals
	return q.parseSLOWindow(r.Window)
}

// parseSLOLatency reads a latency objective's family and threshold. An
// availability objective ignores both, so an editor switching kinds may
// leave them in the query.
func (q *Query) parseSLOLatency(family string, threshold json.RawMessage) error {
	q.SLO.Family = family
	if q.SLO.Family == "" {
		q.SLO.Family = DefaultSLOFamily
	}
	if err := oneOf("family", q.SLO.Family, SLOFamilies); err != nil {
		return err
	}
	var err error
	if q.SLO.Threshold, err = number("threshold", threshold, DefaultSLOThreshold); err != nil {
		return err
	}
	if !(q.SLO.Threshold > 0 && q.SLO.Threshold <= MaxSLOThreshold) {
		return invalid("threshold %v is out of range; allowed: seconds above 0 up to %g", q.SLO.Threshold, float64(MaxSLOThreshold))
	}
	return nil
}

func (q *Query) parseSLOWindow(w string) error {
	q.SLO.Window = strings.TrimSpace(w)
	if q.SLO.Window == "" {
		q.SLO.Window = DefaultSLOWindow
	}
	d, err := model.ParseDuration(q.SLO.Window)
	if err != nil {
		return invalid("window %q is not a Prometheus duration such as 28d or 30d", q.SLO.Window)
	}
	q.SLO.WindowDuration = time.Duration(d)
	if q.SLO.WindowDuration < MinSLOWindow || q.SLO.WindowDuration > MaxSLOWindow {
		return invalid("window %s is out of range; allowed: 1h to 366d", q.SLO.Window)
	}
	return nil
}

// number reads a JSON number or numeric string; absent means def.
func number(field string, raw json.RawMessage, def float64) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, invalid("%s %s is not a number", field, raw)
	}
	f, ok := parseNumber(s)
	if !ok {
		return 0, invalid("%s %q is not a number", field, s)
	}
	return f, nil
}

// String describes the objective, e.g. "99% of ttft under 1s over 28d" or
// "99.9% of requests without error over 28d".
func (s SLO) String() string {
	if s.Objective == SLOAvailability {
		return fmt.Sprintf("%s%% of requests without error over %s", strconv.FormatFloat(s.Target*100, 'f', -1, 64), s.Window)
	}
	return fmt.Sprintf("%s%% of %s under %ss over %s", strconv.FormatFloat(s.Target*100, 'f', -1, 64), s.Family,
		strconv.FormatFloat(s.Threshold, 'f', -1, 64), s.Window)
}
