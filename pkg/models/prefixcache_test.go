package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePrefixCache(t *testing.T) {
	tests := []struct {
		name, js string
		want     Grouping
	}{
		{"default grouping is instance", `{"queryType":"prefixCache"}`, GroupInstance},
		{"none", `{"queryType":"prefixCache","grouping":"none"}`, GroupNone},
		{"model", `{"queryType":"prefixCache","grouping":"model"}`, GroupModel},
		{"instance_engine", `{"queryType":"prefixCache","grouping":"instance_engine","engines":["0"]}`, GroupInstanceEngine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := parseJSON(tt.js)
			require.NoError(t, err)
			require.Equal(t, QueryPrefixCache, q.Type)
			require.Equal(t, tt.want, q.Grouping)
		})
	}
	_, err := parseJSON(`{"queryType":"prefixCache","grouping":"pod"}`)
	require.ErrorIs(t, err, ErrInvalidQuery)
	require.ErrorContains(t, err, `grouping "pod" is not allowed for prefixCache`)
}

func TestPrefixCacheListedBeforePromQL(t *testing.T) {
	idx := map[QueryType]int{}
	for i, qt := range QueryTypes {
		idx[qt] = i
	}
	require.Greater(t, idx[QueryPrefixCache], idx[QueryHost], "after host")
	require.Less(t, idx[QueryPrefixCache], idx[QueryPromQL], "before promql")
}
