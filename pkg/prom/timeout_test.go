package prom

import (
	"net/http"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend/httpclient"
	"github.com/stretchr/testify/require"
)

// TestTimeoutOption: Options.Timeout bounds a whole request (it is the
// data source's query timeout, which nothing else enforces), whether or
// not Grafana's HTTP settings carried timeouts of their own.
func TestTimeoutOption(t *testing.T) {
	for name, hopts := range map[string]httpclient.Options{
		"no HTTP timeouts":    {},
		"HTTP timeouts of 1m": {Timeouts: &httpclient.TimeoutOptions{Timeout: time.Minute, DialTimeout: time.Second}},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan struct{})
			slow := func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(5 * time.Second):
				case <-done: // the test ended: let the server close
				}
			}
			c := testClient(t, slow, Options{HTTP: hopts, Timeout: 100 * time.Millisecond})
			t.Cleanup(func() { close(done) }) // runs before the server's Close
			// The server would answer after 5s, with an empty body (a
			// decoding error): only the client's timeout gives this kind.
			_, _, err := c.QueryRange(t.Context(), "up", testRange())
			require.Equal(t, KindTimeout, KindOf(err), "%v", err)
		})
	}
}
