package models

import (
	"encoding/json"
	"fmt"
	"strconv"
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

// SLOOptions are the slo type's options: one objective over Window. For
// a latency objective, Target of the requests of Family finish under
// Threshold seconds; for an availability objective, Target of the finished
// requests do not end in error (Family and Threshold are then unused and
// left empty: the table skips the fields of the other kind).
type SLOOptions struct {
	// Objective is SLOLatency or SLOAvailability.
	Objective string  `json:"objective"`
	Family    string  `json:"family"`
	Threshold float64 `json:"threshold"`
	// Target is the share meeting the objective; absent, the objective's
	// default (SLOSpec.Objectives).
	Target float64 `json:"target"`
	// Window is the compliance window as written ("28d"); WindowDuration is it parsed.
	Window         string        `json:"window"`
	WindowDuration time.Duration `json:"-"`
	// Signals limits the answer to some of SLOSignals (an alert rule on
	// one burn-rate pair); empty means all.
	Signals []string `json:"signals"`
	// PriorityScope computes the objective per vLLM priority class and/or
	// for some classes only.
	PriorityScope
}

// finish applies the objective's default target and parses the window the
// table has checked.
func (o *SLOOptions) finish() error {
	if o.Objective == SLOLatency && o.Family == "itl" && o.PriorityActive() {
		return invalid("vLLM does not label inter-token latency (family itl) by priority; byPriority and priorities apply to the other families")
	}
	if o.Target == 0 {
		o.Target = objectiveTarget(o.Objective)
	}
	d, err := model.ParseDuration(o.Window)
	if err != nil {
		return fmt.Errorf("models: slo window %q passed the table: %w", o.Window, err)
	}
	o.WindowDuration = time.Duration(d)
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
func (s SLOOptions) String() string {
	if s.Objective == SLOAvailability {
		return fmt.Sprintf("%s%% of requests without error over %s", strconv.FormatFloat(s.Target*100, 'f', -1, 64), s.Window)
	}
	return fmt.Sprintf("%s%% of %s under %ss over %s", strconv.FormatFloat(s.Target*100, 'f', -1, 64), s.Family,
		strconv.FormatFloat(s.Threshold, 'f', -1, 64), s.Window)
}
