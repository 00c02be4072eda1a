package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSLOStringShortestForm: the description writes the target as a
// percentage and the threshold in seconds in their shortest form, with no
// trailing ".0" on whole numbers ("99%", "1s", not "99.0%", "1.0s").
func TestSLOStringShortestForm(t *testing.T) {
	tests := []struct{ js, want string }{
		{js: `{"queryType":"slo"}`, want: "99% of ttft under 1s over 28d"},
		{js: `{"queryType":"slo","family":"itl","threshold":0.25,"target":0.9}`, want: "90% of itl under 0.25s over 28d"},
		{js: `{"queryType":"slo","threshold":2,"target":0.9995,"window":"7d"}`, want: "99.95% of ttft under 2s over 7d"},
		{js: `{"queryType":"slo","objective":"availability","target":0.99}`, want: "99% of requests without error over 28d"},
		{js: `{"queryType":"slo","objective":"availability","target":0.9995}`, want: "99.95% of requests without error over 28d"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			q, err := parseJSON(tt.js)
			require.NoError(t, err)
			require.Equal(t, tt.want, q.Options.(SLOOptions).String())
		})
	}
}
