package live_test

import (
	"errors"
	"testing"
	"time"

	"github.com/inferops/vllm-datasource/pkg/live"
)

// FuzzParseChannel: any path from a browser is accepted or refused with
// ErrBadPath, never a panic, and an accepted one ticks at least every
// second and no faster than the scrape interval.
func FuzzParseChannel(f *testing.F) {
	f.Add("queue/sha256/"+live.HashOptions("e30"), []byte(`{"options":"e30"}`))
	f.Add("queue/sha256/x", []byte(`{"options":7}`))
	for _, seed := range []string{"", "queue", "fleet/", "queue/e30", "queue/e30=", "queue/%%%", "queue/W10",
		"fleet/" + live.EncodeOptions([]byte(`{"worst":3,"every":"2s","models":["a\u0000b"]}`)),
		"queue/" + live.EncodeOptions([]byte(`{"every":"-1s"}`)), "queue/" + live.EncodeOptions([]byte(`{"every":"1e9y"}`)),
		"queue/" + live.EncodeOptions([]byte(`{"matchers":"{"}`)), "queue//", "../queue"} {
		f.Add(seed, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, path string, data []byte) {
		c, err := live.ParseChannel(path, data, 2*time.Second)
		if err != nil {
			if !errors.Is(err, live.ErrBadPath) {
				t.Fatalf("%q: %v does not wrap ErrBadPath", path, err)
			}
			return
		}
		if c.Every < 2*time.Second {
			t.Fatalf("%q: every %s is below the scrape interval", path, c.Every)
		}
	})
}
