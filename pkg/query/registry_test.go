package query

import (
	"context"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestEveryTypeHasAHandler: every query type the models accept is
// registered, and nothing else is, so a new type cannot reach run without
// its line in handlers.
func TestEveryTypeHasAHandler(t *testing.T) {
	for _, qt := range models.QueryTypes {
		t.Run(string(qt), func(t *testing.T) {
			require.NotNil(t, handlers[qt], "no handler registered for %q in registry.go", qt)
		})
	}
	require.Len(t, handlers, len(models.QueryTypes), "a handler for a type models.QueryTypes does not list")
}

// TestRunUnknownType: a type without a handler is an error, never a panic
// or an empty answer.
func TestRunUnknownType(t *testing.T) {
	p := &plan{query: models.Query{Type: "nope"}}
	_, err := p.run(context.Background())
	require.ErrorContains(t, err, `query type "nope" has no handler`)
}

// TestNoticesFor: each answer's notices are its own slice, the plan's
// first, so appending to one answer's notices never changes the plan's or
// another answer's.
func TestNoticesFor(t *testing.T) {
	step := data.Notice{Text: "step raised"}
	a, b := data.Notice{Text: "a"}, data.Notice{Text: "b"}
	tests := []struct {
		name  string
		plan  []data.Notice
		lists [][]data.Notice
		want  []data.Notice
	}{
		{"plan only", []data.Notice{step}, nil, []data.Notice{step}},
		{"plan first, then the lists in order", []data.Notice{step}, [][]data.Notice{{a}, nil, {b}}, []data.Notice{step, a, b}},
		{"no plan notices", nil, [][]data.Notice{{b}, {a}}, []data.Notice{b, a}},
		{"nothing", nil, nil, []data.Notice{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Spare capacity: an append into the plan's array would not
			// have to copy, so sharing it would show.
			p := &plan{notices: append(make([]data.Notice, 0, 8), tt.plan...)}
			first := p.noticesFor(tt.lists...)
			require.Equal(t, tt.want, first)
			second := append(p.noticesFor(), data.Notice{Text: "second answer's own"})
			for i := range first {
				first[i].Text = "overwritten"
			}
			require.Equal(t, append([]data.Notice{}, tt.plan...), p.notices, "the plan's notices are unchanged")
			require.Equal(t, append(append([]data.Notice{}, tt.plan...), data.Notice{Text: "second answer's own"}), second,
				"one answer's notices are not another's")
		})
	}
}
