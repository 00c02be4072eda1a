package models

// Parsing a query type's own options from its entries in the query table
// (querytable.go): each Option is read by its kind, with its default, its
// range, its values and its aliases, into the type's options struct (the
// XxxOptions type in the type's file). No type parses its JSON by hand, so a
// new option is one table entry and one struct field.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// optionValues are a type's options as the table parsed them, by field. An
// option absent from the query and without a default is absent here.
type optionValues map[string]any

// finisher is an options struct with a rule that spans its fields (topk's
// format implies asSeries; slo's target default depends on the objective).
type finisher interface {
	finish() error
}

// decoder turns the parsed values into a type's options struct.
type decoder func(optionValues) (any, error)

// optionsAs is the decoder into O: the values go through O's json tags
// (their names are the table's fields), then O's own finish rule runs.
func optionsAs[O any](v optionValues) (any, error) {
	var o O
	js, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(js, &o)
	}
	if err != nil {
		// The table and the struct disagree: our bug, not the user's input.
		return nil, fmt.Errorf("models: options %v do not fit %T: %w", v, o, err)
	}
	if f, ok := any(&o).(finisher); ok {
		if err := f.finish(); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// typed sets the options struct a type's entry parses into.
func typed[O any](s TypeSpec) TypeSpec {
	s.decode = optionsAs[O]
	return s
}

// OptionsOf returns q's options as O, the struct of q's type; ok is false
// when q is of another type.
func OptionsOf[O any](q Query) (O, bool) {
	o, ok := q.Options.(O)
	return o, ok
}

// parseOptions reads the type's options from the query's JSON object.
func (s TypeSpec) parseOptions(js []byte) (any, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(js, &fields); err != nil {
		return nil, invalid("malformed query JSON: %v", err)
	}
	v := optionValues{}
	for _, o := range s.Options {
		if s.skips(o.Field, v) {
			continue
		}
		val, ok, err := o.parse(lookup(fields, o.Field))
		if err != nil {
			return nil, err
		}
		if ok {
			v[o.Field] = val
		}
	}
	if s.decode == nil {
		return nil, fmt.Errorf("models: query type %s has no options struct in the table", s.Type)
	}
	return s.decode(v)
}

// lookup finds field the way encoding/json matches struct fields: the exact
// name first, else the name in any case.
func lookup(fields map[string]json.RawMessage, field string) json.RawMessage {
	if raw, ok := fields[field]; ok {
		return raw
	}
	for k, raw := range fields {
		if strings.EqualFold(k, field) {
			return raw
		}
	}
	return nil
}

// skips reports whether field belongs to an slo objective kind other than
// the one chosen: that kind ignores it, so an editor switching kinds may
// leave it in the query unchecked. The objective is the type's first option,
// so it is parsed before the fields it gates.
func (s TypeSpec) skips(field string, parsed optionValues) bool {
	if s.SLO == nil {
		return false
	}
	chosen, _ := parsed["objective"].(string)
	for _, obj := range s.SLO.Objectives {
		for _, f := range obj.Fields {
			if f == field && obj.Name != chosen {
				return true
			}
		}
	}
	return false
}

// parse reads one option's raw JSON (nil when absent) by its kind; ok is
// false when the option is absent and has no default.
func (o Option) parse(raw json.RawMessage) (any, bool, error) {
	absent := len(raw) == 0 || string(raw) == "null"
	switch o.Kind {
	case KindChoice:
		return o.parseChoice(raw, absent)
	case KindChoices:
		return o.parseChoices(raw, absent)
	case KindInteger:
		k, err := o.parseInteger(raw, absent)
		return k, true, err
	case KindNumber:
		return o.parseNumber(raw, absent)
	case KindNumbers:
		return o.parseNumbers(raw, absent)
	case KindDuration:
		return o.parseDuration(raw, absent)
	case KindText:
		return o.parseText(raw, absent)
	case KindBoolean:
		var b bool
		return b, true, o.decodeAs(raw, absent, &b, "true or false")
	}
	return nil, false, fmt.Errorf("models: option %s has unknown kind %q", o.Field, o.Kind)
}

// decodeAs decodes a present raw value into v; a value of another JSON type
// is malformed.
func (o Option) decodeAs(raw json.RawMessage, absent bool, v any, want string) error {
	if absent {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("malformed query JSON: %s is %s, not %s", o.Field, raw, want)
	}
	return nil
}

func (o Option) parseChoice(raw json.RawMessage, absent bool) (any, bool, error) {
	var s string
	if err := o.decodeAs(raw, absent, &s, "a string"); err != nil {
		return nil, false, err
	}
	v, err := o.choose(s)
	return v, v != "", err
}

func (o Option) parseChoices(raw json.RawMessage, absent bool) (any, bool, error) {
	var list []string
	if err := o.decodeAs(raw, absent, &list, "a list of strings"); err != nil {
		return nil, false, err
	}
	for _, v := range list {
		if err := oneOf(o.Field, v, o.Values); err != nil {
			return nil, false, err
		}
	}
	return list, list != nil, nil
}

// parseNumber reads a number or numeric string inside the option's range;
// absent is the default, or nothing when there is none.
func (o Option) parseNumber(raw json.RawMessage, absent bool) (any, bool, error) {
	if absent && o.Default == nil {
		return nil, false, nil
	}
	f, err := number(o.Field, raw, o.defaultFloat())
	if err != nil {
		return nil, false, err
	}
	if !o.Range.Contains(f) {
		return nil, false, invalid("%s %v is out of range %s%s", o.Field, f, o.Range, o.Hint)
	}
	return f, true, nil
}

// parseNumbers reads a list of numbers, each inside the range (an entry is
// named in the singular: "quantile 1.5"); an empty list is the default.
func (o Option) parseNumbers(raw json.RawMessage, absent bool) (any, bool, error) {
	var list []float64
	if err := o.decodeAs(raw, absent, &list, "a list of numbers"); err != nil {
		return nil, false, err
	}
	if len(list) == 0 {
		def, _ := o.Default.([]float64)
		list = append([]float64(nil), def...)
	}
	for _, f := range list {
		if !o.Range.Contains(f) {
			return nil, false, invalid("%s %v is out of range %s", strings.TrimSuffix(o.Field, "s"), f, o.Range)
		}
	}
	return list, true, nil
}

func (o Option) parseDuration(raw json.RawMessage, absent bool) (any, bool, error) {
	var s string
	if err := o.decodeAs(raw, absent, &s, "a string"); err != nil {
		return nil, false, err
	}
	if s = strings.TrimSpace(s); s == "" {
		s = o.defaultString()
	}
	d, err := model.ParseDuration(s)
	if err != nil {
		return nil, false, invalid("%s %q is not a Prometheus duration such as 28d or 30d", o.Field, s)
	}
	if !o.Durations.Contains(time.Duration(d)) {
		return nil, false, invalid("%s %s is out of range; allowed: %s to %s", o.Field, s, o.Durations.Min, o.Durations.Max)
	}
	return s, true, nil
}

// parseText reads free text, surrounding spaces trimmed; a required one
// must not be empty.
func (o Option) parseText(raw json.RawMessage, absent bool) (any, bool, error) {
	var s string
	if err := o.decodeAs(raw, absent, &s, "a string"); err != nil {
		return nil, false, err
	}
	s = strings.TrimSpace(s)
	if s == "" && o.Required {
		return nil, false, invalid("%s is empty%s", o.Field, o.Hint)
	}
	return s, s != "", nil
}

// parseInteger reads a whole number, as a JSON number or a numeric string
// (template variables arrive as strings), inside the option's range.
func (o Option) parseInteger(raw json.RawMessage, absent bool) (int, error) {
	if absent {
		return int(o.defaultFloat()), nil
	}
	r := *o.Range
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, invalid("%s %s is not a number; allowed: whole numbers %g to %g", o.Field, raw, r.Min, r.Max)
		}
		var ok bool
		if f, ok = parseNumber(s); !ok {
			return 0, invalid("%s %q is not a number; allowed: whole numbers %g to %g", o.Field, s, r.Min, r.Max)
		}
	}
	if f != float64(int(f)) || !r.Contains(f) {
		return 0, invalid("%s %v is out of range; allowed: whole numbers %g to %g", o.Field, f, r.Min, r.Max)
	}
	return int(f), nil
}
