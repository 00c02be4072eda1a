package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/prometheus/model/labels"
)

// QueryType selects what a query answers.
type QueryType string

// The query types. Their JSON options are documented in docs/queries.md.
const (
	QueryQueue       QueryType = "queue"
	QueryWaitTime    QueryType = "waitTime"
	QueryPreemptions QueryType = "preemptions"
	QueryTopK        QueryType = "topk"
	QueryGPU         QueryType = "gpu"
	// QueryFleet is one row per engine: state, load, latency and GPUs.
	QueryFleet QueryType = "fleet"
	// QuerySaturation is a verdict per instance with its evidence.
	QuerySaturation QueryType = "saturation"
)

// Grouping says which labels series are split by.
type Grouping string

// Groupings, from coarse to fine.
const (
	GroupNone           Grouping = "none"
	GroupModel          Grouping = "model"
	GroupInstance       Grouping = "instance"
	GroupInstanceEngine Grouping = "instance_engine"
	// GroupRole splits a fleet that disaggregates prefill and decode by
	// the role its stack puts on the series (llm_isvc_role on KServe; see
	// roleLabel in the data-source settings). Series without a role form
	// one group.
	GroupRole Grouping = "role"
)

// ErrInvalidQuery is wrapped by every query validation error.
var ErrInvalidQuery = errors.New("invalid query")

// ErrUnresolvedVariable is wrapped by the error of an alert query that
// still holds a dashboard variable: Grafana does not interpolate those for
// alert rules.
var ErrUnresolvedVariable = errors.New("unresolved template variable")

// Filters narrow a query to some models, instances or engines. Values are
// literal label values, never regexes: the PromQL builder escapes them.
type Filters struct {
	Models    []string `json:"models,omitempty"`
	Instances []string `json:"instances,omitempty"`
	Engines   []string `json:"engines,omitempty"`
	// Matchers is the query's own label matchers on any label (namespace,
	// cluster, pod, …), e.g. `namespace="inference"`, parsed like the
	// data source's selector and added to every vLLM series selector.
	Matchers string `json:"matchers,omitempty"`
	// Labels holds Matchers parsed.
	Labels []*labels.Matcher `json:"-"`
}

// Query is one parsed and validated query: what every type shares, and
// Options, the type's own (the XxxOptions struct of its file, parsed from
// its entries in the query table).
type Query struct {
	RefID    string
	Type     QueryType
	Grouping Grouping
	Filters
	Legend string
	// MinStep is Grafana's per-query "interval" (min step) string.
	MinStep string
	// Options is the type's options struct, e.g. WaitTimeOptions for
	// waitTime (OptionsOf reads it typed).
	Options any
	// Time and resolution from Grafana.
	TimeRange     TimeRange
	Interval      time.Duration
	MaxDataPoints int64
}

// TimeRange is a query's time range, as Grafana sends it.
type TimeRange struct {
	From, To time.Time
}

// Request is what Grafana sends for one query: the fields of the SDK's
// backend.DataQuery that a query is parsed from, under their names there.
// The SDK's type is converted where the plugin receives it (pkg/query), so
// that this package builds without the SDK's backend: the fuzzers
// instrument every package a target imports, and the backend brings
// hundreds (gRPC, Arrow, OpenTelemetry).
type Request struct {
	RefID         string
	QueryType     string
	JSON          []byte
	TimeRange     TimeRange
	Interval      time.Duration
	MaxDataPoints int64
}

// rawQuery is what every type's JSON shares; unknown fields (datasource,
// intervalMs, hide, …) are ignored, and each type's own options are read
// by the table (TypeSpec.parseOptions).
type rawQuery struct {
	QueryType string `json:"queryType"`
	Grouping  string `json:"grouping"`
	Legend    string `json:"legend"`
	Interval  string `json:"interval"`
	Filters
}

// ParseQuery decodes and validates one Grafana query. Errors name the field
// and the allowed values and wrap ErrInvalidQuery.
func ParseQuery(dq Request) (Query, error) {
	var raw rawQuery
	if err := json.Unmarshal(dq.JSON, &raw); err != nil {
		return Query{}, invalid("malformed query JSON: %v", err)
	}
	q := Query{RefID: dq.RefID, Legend: raw.Legend, MinStep: raw.Interval, Filters: raw.Filters,
		TimeRange: dq.TimeRange, Interval: dq.Interval, MaxDataPoints: dq.MaxDataPoints}
	qt := dq.QueryType
	if qt == "" {
		qt = raw.QueryType
	}
	steps := []func() error{
		func() (err error) { q.Type, err = parseType(qt); return },
		func() (err error) { q.Grouping, err = parseGrouping(raw.Grouping, q.Type); return },
		func() error { return validateFilters(q.Filters) },
		func() (err error) { q.Labels, err = parseQueryMatchers(q.Matchers); return },
		func() error { return validateTimeRange(dq.TimeRange) },
		func() (err error) { q.Options, err = mustSpec(q.Type).parseOptions(dq.JSON); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return Query{}, err
		}
	}
	return q, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidQuery, fmt.Sprintf(format, args...))
}

func parseType(s string) (QueryType, error) {
	if s == "" {
		return "", invalid("queryType is missing; allowed: %s", joinTypes())
	}
	for _, t := range QueryTypes {
		if string(t) == s {
			return t, nil
		}
	}
	return "", invalid("queryType %q is unknown; allowed: %s", s, joinTypes())
}

func joinTypes() string {
	s := make([]string, len(QueryTypes))
	for i, t := range QueryTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// parseGrouping applies the type's default grouping and checks the
// grouping against the ones the type takes (the query table).
func parseGrouping(s string, qt QueryType) (Grouping, error) {
	spec := mustSpec(qt)
	if s == "" {
		return spec.DefaultGrouping, nil
	}
	for _, g := range spec.Groupings {
		if string(g) == s {
			return g, nil
		}
	}
	names := make([]string, len(spec.Groupings))
	for i, g := range spec.Groupings {
		names[i] = string(g)
	}
	if spec.GroupingReason != "" {
		return "", invalid("grouping %q is not allowed for %s: %s; allowed: %s", s, qt, spec.GroupingReason, strings.Join(names, ", "))
	}
	return "", invalid("grouping %q is not allowed for %s; allowed: %s", s, qt, strings.Join(names, ", "))
}

func validateFilters(f Filters) error {
	for field, vals := range map[string][]string{"models": f.Models, "instances": f.Instances, "engines": f.Engines} {
		if len(vals) > schema.MaxFilterValues {
			return invalid("%s has %d values; at most %d are allowed", field, len(vals), schema.MaxFilterValues)
		}
		for _, v := range vals {
			if v == "" {
				return invalid("%s contains an empty value", field)
			}
			if !utf8.ValidString(v) {
				// Prometheus label values are UTF-8; anything else can only miss.
				return invalid("%s contains a value that is not valid UTF-8: %q", field, v)
			}
		}
	}
	return nil
}

// parseQueryMatchers parses the query's matchers option.
func parseQueryMatchers(raw string) ([]*labels.Matcher, error) {
	ms, err := ParseMatchers("matchers", raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidQuery, err)
	}
	return ms, nil
}

func validateTimeRange(tr TimeRange) error {
	if tr.To.Before(tr.From) {
		return invalid("time range ends (%s) before it starts (%s)", tr.To.Format(time.RFC3339), tr.From.Format(time.RFC3339))
	}
	return nil
}

func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if a == v {
			return nil
		}
	}
	return invalid("%s %q is unknown; allowed: %s", field, v, strings.Join(allowed, ", "))
}
