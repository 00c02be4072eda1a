package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseHost(t *testing.T) {
	for _, js := range []string{`{"queryType":"host"}`, `{"queryType":"host","grouping":"instance","instances":["a:8000"]}`} {
		q, err := parseJSON(js)
		require.NoError(t, err, js)
		require.Equal(t, QueryHost, q.Type)
		require.Equal(t, GroupInstance, q.Grouping)
	}
	_, err := parseJSON(`{"queryType":"host","grouping":"instance_engine"}`)
	require.ErrorIs(t, err, ErrInvalidQuery)
	require.ErrorContains(t, err, "allowed: instance")
}
