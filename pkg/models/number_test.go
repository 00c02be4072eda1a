package models_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
)

// TestNumbersFromStringsAreStrict: an option that arrives as text (a
// dashboard variable's value) is a number only when the whole string,
// surrounding spaces aside, is a finite decimal number, as the editor
// accepts it (both read the query table's NumberPattern; src/queryOptions.test.ts
// runs the same strings through the editor). "5x" was 5 with Sscanf.
func TestNumbersFromStringsAreStrict(t *testing.T) {
	tests := []struct {
		text   string
		k      int     // the k it gives; 0 when it is not a number
		target float64 // the SLO target it gives, for those in (0, 1)
	}{
		{text: "5", k: 5},
		{text: " 5 ", k: 5},
		{text: "\t7\n", k: 7},
		{text: "1e2", k: 100},
		{text: "+3", k: 3},
		{text: "5.", k: 5},
		{text: "5.0", k: 5},
		{text: ".99", target: 0.99},
		{text: " 0.999 ", target: 0.999},
		{text: "9.9e-1", target: 0.99},
		{text: "5x"},
		{text: "x5"},
		{text: "0x10"},
		{text: "0x1p4"},
		{text: "1_0"},
		{text: "NaN"},
		{text: "Inf"},
		{text: "+Inf"},
		{text: "infinity"},
		{text: "1e400"},
		{text: "5 5"},
		{text: ""},
		{text: " "},
		{text: "."},
		{text: "e5"},
		{text: "$k"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			js, err := json.Marshal(tt.text)
			require.NoError(t, err)
			q, kErr := models.ParseQuery(models.Request{RefID: "A", JSON: []byte(`{"queryType":"topk","k":` + string(js) + `}`)})
			s, sErr := models.ParseQuery(models.Request{RefID: "A", JSON: []byte(`{"queryType":"slo","target":` + string(js) + `}`)})
			switch {
			case tt.k != 0:
				require.NoError(t, kErr)
				require.Equal(t, tt.k, q.Options.(models.TopKOptions).K)
			case tt.target != 0:
				require.NoError(t, sErr)
				require.InDelta(t, tt.target, s.Options.(models.SLOOptions).Target, 1e-12)
			default:
				require.ErrorIs(t, kErr, models.ErrInvalidQuery)
				require.ErrorContains(t, kErr, "is not a number")
				require.ErrorIs(t, sErr, models.ErrInvalidQuery)
				require.ErrorContains(t, sErr, "is not a number")
			}
		})
	}
}
