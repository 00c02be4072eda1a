package models

// The editor reads the same table as src/queryTypes.json, and its query
// types and their wording as src/queryTypes.gen.ts. Regenerate both after
// changing the table (TestQueryTypesJSON and
// TestQueryTypesTS fail until you do):
//
//	go generate ./pkg/models/
//
// The generator is cmd/querytypes: it reads pkg/vllm, which imports this
// package, so it cannot live below it.
//
//go:generate go run ../../cmd/querytypes -o ../../src/queryTypes.json -ts ../../src/queryTypes.gen.ts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// Schema is every query type's rules in one place (querytable.go): the
// groupings, options, defaults and limits ParseQuery applies, and the
// choices the editor offers. The editor imports it as src/queryTypes.json,
// so the backend and the editor cannot drift apart.
type Schema struct {
	// Groupings are all groupings, from coarse to fine.
	Groupings []Grouping `json:"groupings"`
	// MaxFilterValues keeps one selector (models, instances, engines) from
	// growing without bound.
	MaxFilterValues int `json:"maxFilterValues"`
	// NumberPattern is the syntax of a number written as text (a dashboard
	// variable's value): optional sign, digits with an optional fraction,
	// an optional exponent; nothing before or after. RE2 and JavaScript
	// read it alike.
	NumberPattern string `json:"numberPattern"`
	// Types are the query types in the order the editor shows them.
	Types []TypeSpec `json:"types"`
}

// TypeSpec is one query type's rules.
type TypeSpec struct {
	Type QueryType `json:"type"`
	// Groupings are the groupings the type accepts, coarse to fine.
	Groupings []Grouping `json:"groupings"`
	// DefaultGrouping applies when the query gives none.
	DefaultGrouping Grouping `json:"defaultGrouping"`
	// GroupingReason says why the groupings are restricted; error messages
	// quote it.
	GroupingReason string `json:"groupingReason,omitempty"`
	// Options are the type's own JSON fields.
	Options []Option `json:"options,omitempty"`
	// SLO holds the slo type's objective kinds and bucket bounds.
	SLO *SLOSpec `json:"slo,omitempty"`
	// Wording is the type's label and description in the editor's type
	// picker (worded); SchemaTS writes it into src/queryTypes.gen.ts.
	Wording TypeWording `json:"-"`
	// decode fills the type's options struct (typed, options.go).
	decode decoder
}

// OptionKind says what an option's value is.
type OptionKind string

// Option kinds.
const (
	// KindChoice is one of Values.
	KindChoice OptionKind = "choice"
	// KindChoices is a list, each entry one of Values.
	KindChoices OptionKind = "choices"
	// KindInteger is a whole number inside Range (a number or a numeric string).
	KindInteger OptionKind = "integer"
	// KindNumber is a number inside Range (a number or a numeric string).
	KindNumber OptionKind = "number"
	// KindNumbers is a list of numbers, each inside Range.
	KindNumbers OptionKind = "numbers"
	// KindDuration is a Prometheus duration inside Durations.
	KindDuration OptionKind = "duration"
	// KindText is free text.
	KindText OptionKind = "text"
	// KindBoolean is true or false.
	KindBoolean OptionKind = "boolean"
)

// Option is one JSON field of a query type.
type Option struct {
	Field string     `json:"field"`
	Kind  OptionKind `json:"kind"`
	// Values are the allowed values of a choice, in the editor's order.
	Values []string `json:"values,omitempty"`
	// Aliases are accepted values that stand for one of Values.
	Aliases map[string]string `json:"aliases,omitempty"`
	// Default applies when the field is absent; none means absent stays
	// empty (and means what the type's doc says).
	Default any `json:"default,omitempty"`
	// Range bounds a number, or each of a list of numbers.
	Range *Range `json:"range,omitempty"`
	// Durations bounds a duration.
	Durations *DurationRange `json:"durations,omitempty"`
	// Required makes an empty text an error.
	Required bool `json:"required,omitempty"`
	// Hint ends the option's out-of-range or empty error, e.g. "; write
	// 99% as 0.99".
	Hint string `json:"hint,omitempty"`
}

// Range is an interval of numbers; each end is open (excluded) or closed.
type Range struct {
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	MinOpen bool    `json:"minOpen,omitempty"`
	MaxOpen bool    `json:"maxOpen,omitempty"`
}

// Contains reports whether f lies inside the range.
func (r Range) Contains(f float64) bool {
	above := f > r.Min || (!r.MinOpen && f == r.Min)
	below := f < r.Max || (!r.MaxOpen && f == r.Max)
	return above && below
}

// String writes the range in interval notation: "(0, 1)", "[1, 100]".
func (r Range) String() string {
	lo, hi := "[", "]"
	if r.MinOpen {
		lo = "("
	}
	if r.MaxOpen {
		hi = ")"
	}
	return fmt.Sprintf("%s%g, %g%s", lo, r.Min, r.Max, hi)
}

// DurationRange bounds a duration; both ends are Prometheus durations and
// included.
type DurationRange struct {
	Min string `json:"min"`
	Max string `json:"max"`
}

// Contains reports whether d lies inside the range.
func (r DurationRange) Contains(d time.Duration) bool {
	return d >= mustDuration(r.Min) && d <= mustDuration(r.Max)
}

// SLOSpec is what the slo type needs beyond its options.
type SLOSpec struct {
	// Objectives are the objective kinds, the default first.
	Objectives []Objective `json:"objectives"`
	// Bounds are vLLM's default bucket bounds per family, for the editor's
	// snap hint. They belong to pkg/vllm (LatencyBuckets), which imports
	// this package, so only SchemaJSON fills them in; empty here.
	Bounds map[string][]float64 `json:"bounds,omitempty"`
}

// Objective is one kind of SLO objective.
type Objective struct {
	Name string `json:"name"`
	// DefaultTarget applies when the query gives no target.
	DefaultTarget float64 `json:"defaultTarget"`
	// Fields are the options only this kind reads; the other kinds ignore
	// them, so an editor switching kinds may leave them in the query.
	Fields []string `json:"fields,omitempty"`
}

// QuerySchema returns the table of query types.
func QuerySchema() Schema { return schema }

// Spec returns the rules of query type qt; ok is false for an unknown type.
func Spec(qt QueryType) (TypeSpec, bool) {
	for _, s := range schema.Types {
		if s.Type == qt {
			return s, true
		}
	}
	return TypeSpec{}, false
}

// mustSpec is Spec for a type the table is known to have.
func mustSpec(qt QueryType) TypeSpec {
	s, ok := Spec(qt)
	if !ok {
		panic(fmt.Sprintf("models: query type %q is not in the table", qt))
	}
	return s
}

// Option returns the type's option named field; the zero Option (no values,
// no default) when it has none.
func (s TypeSpec) Option(field string) Option {
	for _, o := range s.Options {
		if o.Field == field {
			return o
		}
	}
	return Option{Field: field}
}

// option is the option field of query type qt.
func option(qt QueryType, field string) Option { return mustSpec(qt).Option(field) }

// Objective returns the slo objective kind named name.
func (s SLOSpec) Objective(name string) (Objective, bool) {
	for _, o := range s.Objectives {
		if o.Name == name {
			return o, true
		}
	}
	return Objective{}, false
}

// choose applies a choice option to v: the default when v is empty, an
// alias resolved, then one of Values. Without a default an empty v stays
// empty.
func (o Option) choose(v string) (string, error) {
	if v == "" {
		v, _ = o.Default.(string)
	}
	if a, ok := o.Aliases[v]; ok {
		v = a
	}
	if v == "" {
		return "", nil
	}
	return v, oneOf(o.Field, v, o.Values)
}

// defaultFloat is a number option's default.
func (o Option) defaultFloat() float64 {
	switch d := o.Default.(type) {
	case float64:
		return d
	case int:
		return float64(d)
	}
	return 0
}

// defaultString is a text, choice or duration option's default.
func (o Option) defaultString() string {
	s, _ := o.Default.(string)
	return s
}

// mustDuration parses a duration the table holds.
func mustDuration(s string) time.Duration {
	d, err := model.ParseDuration(s)
	if err != nil {
		panic(fmt.Sprintf("models: duration %q in the query table: %v", s, err))
	}
	return time.Duration(d)
}

// SchemaJSON is the table as the editor reads it (src/queryTypes.json),
// with the slo type's default bucket bounds per family filled in by bounds
// (pkg/vllm's, which this package cannot import). Two-space indent and a
// final newline, as the generator writes it.
func SchemaJSON(bounds func(family string) []float64) ([]byte, error) {
	s := schema
	s.Types = append([]TypeSpec(nil), schema.Types...)
	for i, t := range s.Types {
		if t.SLO == nil {
			continue
		}
		slo := *t.SLO
		slo.Bounds = map[string][]float64{}
		for _, f := range t.Option("family").Values {
			if slo.Bounds[f] = bounds(f); len(slo.Bounds[f]) == 0 {
				return nil, fmt.Errorf("no bucket bounds for slo family %q", f)
			}
		}
		s.Types[i].SLO = &slo
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encode query types: %w", err)
	}
	return buf.Bytes(), nil
}
