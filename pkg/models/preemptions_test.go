package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPreemptionsPerRequestImpliesSeries: perRequest is a series format.
func TestPreemptionsPerRequestImpliesSeries(t *testing.T) {
	tests := []struct {
		name string
		in   PreemptionsOptions
		want PreemptionsOptions
	}{
		{"events", PreemptionsOptions{}, PreemptionsOptions{}},
		{"rate", PreemptionsOptions{AsSeries: true}, PreemptionsOptions{AsSeries: true}},
		{"per request", PreemptionsOptions{PerRequest: true}, PreemptionsOptions{AsSeries: true, PerRequest: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.in
			require.NoError(t, o.finish())
			require.Equal(t, tt.want, o)
		})
	}
}
