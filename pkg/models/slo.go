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
	Family    string          `json:"family"`
	Threshold json.RawMessage `json:"threshold"`
	Target    json.RawMessage `json:"target"`
	Window    string          `json:"window"`
	Signals   []string        `json:"signals"`
	Objective string          `json:"objective"`
}

// parseSLO reads the objective and its options; the kinds, defaults and
// limits are the slo entry of the query table.
func (q *Query) parseSLO(js []byte) error {
	var r sloRaw
	if err := json.Unmarshal(js, &r); err != nil {
		return invalid("malformed slo options: %v", err)
	}
	spec := mustSpec(QuerySLO)
	var err error
	if q.SLO.Objective, err = spec.Option("objective").choose(r.Objective); err != nil {
		return err
	}
	obj, _ := spec.SLO.Objective(q.SLO.Objective)
	if q.SLO.Objective == SLOLatency {
		if err := q.parseSLOLatency(spec, r.Family, r.Threshold); err != nil {
			return err
		}
	}
	if err := q.parseSLOTarget(spec.Option("target"), r.Target, obj.DefaultTarget); err != nil {
		return err
	}
	signals := spec.Option("signals")
	for _, sig := range r.Signals {
		if err := oneOf(signals.Field, sig, signals.Values); err != nil {
			return err
		}
	}
	q.SLO.Signals = r.Signals
	return q.parseSLOWindow(spec.Option("window"), r.Window)
}

// parseSLOLatency reads a latency objective's family and threshold. An
// availability objective ignores both, so an editor switching kinds may
// leave them in the query.
func (q *Query) parseSLOLatency(spec TypeSpec, family string, threshold json.RawMessage) error {
	var err error
	if q.SLO.Family, err = spec.Option("family").choose(family); err != nil {
		return err
	}
	opt := spec.Option("threshold")
	if q.SLO.Threshold, err = number(opt.Field, threshold, opt.defaultFloat()); err != nil {
		return err
	}
	if !opt.Range.Contains(q.SLO.Threshold) {
		return invalid("threshold %v is out of range; allowed: seconds above %g up to %g", q.SLO.Threshold, opt.Range.Min, opt.Range.Max)
	}
	return nil
}

// parseSLOTarget reads the target share; def depends on the objective.
func (q *Query) parseSLOTarget(opt Option, raw json.RawMessage, def float64) error {
	var err error
	if q.SLO.Target, err = number(opt.Field, raw, def); err != nil {
		return err
	}
	if !opt.Range.Contains(q.SLO.Target) {
		return invalid("target %v is out of range %s; write 99%% as 0.99", q.SLO.Target, opt.Range)
	}
	return nil
}

func (q *Query) parseSLOWindow(opt Option, w string) error {
	q.SLO.Window = strings.TrimSpace(w)
	if q.SLO.Window == "" {
		q.SLO.Window = opt.defaultString()
	}
	d, err := model.ParseDuration(q.SLO.Window)
	if err != nil {
		return invalid("window %q is not a Prometheus duration such as 28d or 30d", q.SLO.Window)
	}
	q.SLO.WindowDuration = time.Duration(d)
	if !opt.Durations.Contains(q.SLO.WindowDuration) {
		return invalid("window %s is out of range; allowed: %s to %s", q.SLO.Window, opt.Durations.Min, opt.Durations.Max)
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
