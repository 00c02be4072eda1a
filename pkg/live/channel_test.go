package live_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/live"
	"github.com/inferops/vllm-datasource/pkg/models"
)

func path(kind, js string) string {
	return kind + "/" + live.EncodeOptions([]byte(js))
}

// hashedPath and hashedData are a channel whose options are too long for
// Grafana's 160-character channel, as src/live.ts sends it.
func hashedPath(kind, js string) string {
	return kind + "/sha256/" + live.HashOptions(live.EncodeOptions([]byte(js)))
}

func hashedData(js string) string {
	return `{"options":"` + live.EncodeOptions([]byte(js)) + `"}`
}

func TestParseChannel(t *testing.T) {
	const scrape = 2 * time.Second
	tests := []struct {
		name      string
		path      string
		data      string // the subscription's data
		kind      models.QueryType
		every     time.Duration
		query     string // JSON the tick runs
		wantError string
	}{
		{name: "queue with defaults", path: "queue", kind: models.QueryQueue, every: scrape, query: `{"queryType":"queue"}`},
		{name: "queue per engine of one model", path: path("queue", `{"grouping":"instance_engine","models":["m/1"],"live":true}`),
			kind: models.QueryQueue, every: scrape, query: `{"grouping":"instance_engine","live":true,"models":["m/1"],"queryType":"queue"}`},
		{name: "fleet's worst rows every 5s", path: path("fleet", `{"queryType":"fleet","worst":3,"every":"5s"}`),
			kind: models.QueryFleet, every: 5 * time.Second, query: `{"queryType":"fleet","worst":3}`},
		{name: "options in the data, the path their hash", path: hashedPath("fleet", `{"worst":3}`), data: hashedData(`{"worst":3}`),
			kind: models.QueryFleet, every: scrape, query: `{"queryType":"fleet","worst":3}`},
		{name: "padded base64 is read too", path: "queue/" + "e30=", kind: models.QueryQueue, every: scrape, query: `{"queryType":"queue"}`},

		{name: "hashed path without data", path: hashedPath("queue", `{}`), wantError: "a sha256/ path needs its options in the subscription's data"},
		{name: "hashed path, data of another query", path: hashedPath("queue", `{}`), data: hashedData(`{"grouping":"model"}`),
			wantError: "the data's options do not match the path's SHA-256"},
		{name: "hashed path, data not JSON", path: hashedPath("queue", `{}`), data: `{options`, wantError: "needs its options"},
		{name: "hashed path, bad options", path: hashedPath("queue", `{"every":"1ms"}`), data: hashedData(`{"every":"1ms"}`),
			wantError: "every 1ms is below 1s"},
		{name: "no kind", path: "", wantError: "kind is missing; allowed: queue, fleet"},
		{name: "unknown kind", path: path("waitTime", `{}`), wantError: `kind "waitTime" is unknown; allowed: queue, fleet`},
		{name: "options not base64url", path: "queue/{grouping}", wantError: "options are not base64url"},
		{name: "options not an object", path: path("queue", `[1]`), wantError: "options are not a JSON object"},
		{name: "bad grouping", path: path("queue", `{"grouping":"gpu"}`), wantError: `grouping "gpu" is not allowed for queue`},
		{name: "bad worst", path: path("fleet", `{"worst":-2}`), wantError: "worst -2 is out of range"},
		{name: "bad filter", path: path("queue", `{"matchers":"{a=~\"(\"}"}`), wantError: "matchers"},
		{name: "every below a second", path: path("queue", `{"every":"500ms"}`), wantError: "every 500ms is below 1s, the shortest live interval"},
		{name: "every below the scrape interval", path: path("queue", `{"every":"1s"}`), wantError: "every 1s is below the data source's scrape interval (scrapeInterval = 2s)"},
		{name: "every not a duration", path: path("queue", `{"every":"soon"}`), wantError: `every "soon" is not a Prometheus duration`},
		{name: "every not a string", path: path("queue", `{"every":5}`), wantError: "every is 5, not a duration string"},
		{name: "queryType differs from the kind", path: path("queue", `{"queryType":"fleet"}`), wantError: `queryType "fleet" in the options differs from the path's kind "queue"`},
		{name: "a variable left in a filter", path: path("queue", `{"models":["$model"]}`), wantError: "models holds $model, a dashboard variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var data []byte
			if tt.data != "" {
				data = []byte(tt.data)
			}
			c, err := live.ParseChannel(tt.path, data, scrape)
			if tt.wantError != "" {
				require.ErrorIs(t, err, live.ErrBadPath)
				require.ErrorContains(t, err, tt.wantError)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.kind, c.Kind)
			require.Equal(t, tt.every, c.Every)
			require.Equal(t, tt.path, c.Path)
			require.JSONEq(t, tt.query, string(c.Query))
		})
	}
}

// TestEveryFloor: with a scrape interval under a second (or none), the
// default tick is still one second.
func TestEveryFloor(t *testing.T) {
	c, err := live.ParseChannel("queue", nil, 0)
	require.NoError(t, err)
	require.Equal(t, live.MinEvery, c.Every)
}

// TestRefusalIsShort keeps a huge path from filling the log line.
func TestRefusalIsShort(t *testing.T) {
	big, _ := json.Marshal(map[string]any{"grouping": "nope", "legend": string(make([]byte, 4000))})
	_, err := live.ParseChannel(path("queue", string(big)), nil, time.Second)
	require.ErrorContains(t, err, `grouping "nope" is not allowed for queue`)
	require.Less(t, len(err.Error()), 400)
}

// TestFrontendPath parses the path src/live.test.ts pins for a queue query
// by instance of one model: the browser and the backend agree on the format.
func TestFrontendPath(t *testing.T) {
	c, err := live.ParseChannel("queue/eyJncm91cGluZyI6Imluc3RhbmNlIiwibW9kZWxzIjpbIm0vMSJdfQ", nil, time.Second)
	require.NoError(t, err)
	require.Equal(t, models.QueryQueue, c.Kind)
	require.JSONEq(t, `{"queryType":"queue","grouping":"instance","models":["m/1"]}`, string(c.Query))

	// The hashed form src/live.test.ts pins for options too long for a path.
	c, err = live.ParseChannel("queue/sha256/"+frontendHash, []byte(`{"options":"`+frontendOptions+`"}`), time.Second)
	require.NoError(t, err)
	require.Equal(t, models.QueryQueue, c.Kind)
}

// frontendOptions and frontendHash are what src/live.test.ts pins for a
// queue per engine of three models: 205 characters inline, over Grafana's
// 160, so the options go in the data and their hash in the path.
const (
	frontendOptions = "eyJncm91cGluZyI6Imluc3RhbmNlX2VuZ2luZSIsIm1vZGVscyI6WyJtZXRhLWxsYW1hL0xsYW1hLTMuMS04Qi1JbnN0cnVjdCIsIlF3ZW4vUXdlbjIuNS03Qi1JbnN0cnVjdCIsIm1pc3RyYWxhaS9NaXN0cmFsLTdCLUluc3RydWN0LXYwLjMiXX0"
	frontendHash    = "gjwqFkmljk8Fy96kOOQ_14rBQEH5ByQTvrAkSB4Kpic"
)
