package prom

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Compatible back ends report a query they cannot parse differently; each
// must come out as the user's bad query, not as a server failure.
func TestBadQueryAcrossBackends(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"prometheus bad_data", 400, `{"status":"error","errorType":"bad_data","error":"1:14: parse error: unclosed left parenthesis"}`},
		{"prometheus execution", 422, `{"status":"error","errorType":"execution","error":"query processing would load too many samples"}`},
		{"victoriametrics 422", 422, `{"status":"error","errorType":"422","error":"cannot execute query: argList: unexpected token"}`},
		{"victoriametrics 400", 400, `{"status":"error","errorType":"400","error":"missing query arg"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(Options{URL: srv.URL})
			require.NoError(t, err)
			_, _, err = c.Query(context.Background(), "sum(", time.Now())
			require.Equal(t, KindBadQuery, KindOf(err), "%v", err)
		})
	}
}
