package vllm

import (
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// PriorityLabelName is the label vLLM 0.32 adds to its finished-request
// families under --scheduling-policy priority (values
// models.PriorityClasses).
const PriorityLabelName = "priority"

// NoPriorityText is the notice of a query grouped or filtered by priority
// whose families carry no priority label.
const NoPriorityText = "The fleet does not use priority scheduling: no series of this query carries vLLM's priority label. " +
	"Start vLLM (0.32 or later) with --scheduling-policy priority to split or filter by priority."

// SomeWithoutPriorityText is the notice when some series carry the label
// and others do not (engines scheduling first come, first served, or older
// releases beside priority ones).
const SomeWithoutPriorityText = "Some engines report no priority (first-come-first-served scheduling, or vLLM before 0.32): " +
	"their requests are shown without a priority label."

// priorityGroup adds the priority label to a grouping when the scope splits
// by it.
func priorityGroup(gl []string, s models.PriorityScope) []string {
	if !s.ByPriority {
		return gl
	}
	return append(append([]string(nil), gl...), PriorityLabelName)
}

// priorityFilters adds the scope's priority matcher to f's own matchers, so
// every selector built from the result keeps only those classes. Class
// names hold regular-expression characters ("<-1", ">1"): each is quoted.
func priorityFilters(f models.Filters, s models.PriorityScope) models.Filters {
	if len(s.Priorities) == 0 {
		return f
	}
	quoted := make([]string, len(s.Priorities))
	for i, v := range s.Priorities {
		quoted[i] = regexp.QuoteMeta(v)
	}
	f.Labels = append(append([]*labels.Matcher(nil), f.Labels...),
		labels.MustNewMatcher(labels.MatchRegexp, PriorityLabelName, strings.Join(quoted, "|")))
	return f
}

// PriorityGroupLabels are the labels a priority-scoped answer is grouped
// by: the grouping's, then priority when the scope splits by it.
func (b Builder) PriorityGroupLabels(g models.Grouping, s models.PriorityScope) []string {
	return priorityGroup(b.GroupLabels(g), s)
}
