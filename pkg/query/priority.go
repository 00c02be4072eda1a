package query

import (
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// priorityNotices says what a query grouped or filtered by priority could
// not split: nothing when no series of the answer's priority-labelled
// signals (those scoped says) carries the label (filtered only: when the
// filter left none), the engines left without a priority when some do and
// the query groups by it.
func priorityNotices(m prom.Matrix, s models.PriorityScope, scoped func(signal string) bool) []data.Notice {
	if !s.PriorityActive() {
		return nil
	}
	with, without := 0, 0
	for _, series := range m {
		if !scoped(series.Labels[vllm.SignalTagLabel]) {
			continue
		}
		if series.Labels[vllm.PriorityLabelName] != "" {
			with++
		} else {
			without++
		}
	}
	if !s.ByPriority {
		// Filtered without the split: the label is not in the answer,
		// but only series that carry it can match the filter.
		with, without = with+without, 0
	}
	switch {
	case with == 0:
		return []data.Notice{{Severity: data.NoticeSeverityWarning, Text: vllm.NoPriorityText}}
	case without > 0 && s.ByPriority:
		return []data.Notice{{Severity: data.NoticeSeverityInfo, Text: vllm.SomeWithoutPriorityText}}
	}
	return nil
}

// filteredAway reports whether a priority filter, not a missing family,
// emptied the answer: the no-priority notice then says why, and "the
// engines export the family, yet the answer holds none of it" would only
// mislead.
func filteredAway(notices []data.Notice, s models.PriorityScope) bool {
	return len(s.Priorities) > 0 && len(notices) > 0 && notices[0].Text == vllm.NoPriorityText
}
