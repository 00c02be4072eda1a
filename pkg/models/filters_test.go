package models

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilterValuesLimit: a filter may hold exactly MaxFilterValues values,
// and one more is an error that names the field and the limit.
func TestFilterValuesLimit(t *testing.T) {
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("m%d", i)
		}
		return out
	}
	parse := func(n int) error {
		js, err := json.Marshal(map[string]any{"queryType": "queue", "models": values(n)})
		require.NoError(t, err)
		_, err = ParseQuery(Request{RefID: "A", JSON: js})
		return err
	}
	require.NoError(t, parse(MaxFilterValues))
	require.ErrorContains(t, parse(MaxFilterValues+1), fmt.Sprintf("models has %d values; at most %d are allowed", MaxFilterValues+1, MaxFilterValues))
}

// TestQuantileBounds: quantiles are strictly between 0 and 1.
func TestQuantileBounds(t *testing.T) {
	for _, q := range []string{"0", "1", "-0.5", "1.5"} {
		_, err := ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"waitTime","quantiles":[` + q + `]}`)})
		require.ErrorContains(t, err, "quantile "+q+" is out of range (0, 1)")
	}
	_, err := ParseQuery(Request{RefID: "A", JSON: []byte(`{"queryType":"waitTime","quantiles":[0.001,0.999]}`)})
	require.NoError(t, err)
}
