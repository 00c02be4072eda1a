package live

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
)

// ErrBadPath is wrapped by every reason a channel path is refused.
var ErrBadPath = errors.New("live channel refused")

// MinEvery is the shortest tick: a faster one only re-reads the scrape
// Prometheus already answered.
const MinEvery = time.Second

// Kinds are the channel kinds, each a query type whose answer is current
// state: the queue (a wide frame of the newest points) and the fleet table.
var Kinds = []models.QueryType{models.QueryQueue, models.QueryFleet}

// Channel is a validated channel path.
type Channel struct {
	// Path is the path as Grafana sent it (the channel's key).
	Path string
	Kind models.QueryType
	// Query is the query JSON each tick runs, queryType set to Kind.
	Query json.RawMessage
	// Every is the tick: the path's "every", or the data source's
	// scrape interval (at least MinEvery).
	Every time.Duration
}

// ParseChannel validates a channel path, and the data Grafana passes with
// it, against the data source's scrape interval. The path is "<kind>" or
// "<kind>/<options>", where options is the query JSON (the panel's query:
// grouping, filters, legend, worst, …, plus "every", a Prometheus
// duration) encoded base64url without padding (RFC 4648 §5), so that any
// filter value fits Grafana's channel-path characters. Grafana refuses a
// channel longer than 160 characters, so options that do not fit travel
// in the subscription's data instead, {"options": "<options>"}, and the
// path is "<kind>/sha256/<base64url SHA-256 of options>": still one
// channel per query, and data that does not match its path is refused.
// Every refusal wraps ErrBadPath and names the field.
func ParseChannel(path string, data []byte, scrape time.Duration) (Channel, error) {
	kindPart, rest, _ := strings.Cut(path, "/")
	kind, err := parseKind(kindPart)
	if err != nil {
		return Channel{}, refuse(path, err)
	}
	opts, err := optionsPart(rest, data)
	if err != nil {
		return Channel{}, refuse(path, err)
	}
	js, err := decodeOptions(opts)
	if err != nil {
		return Channel{}, refuse(path, err)
	}
	every, err := parseEvery(js, scrape)
	if err != nil {
		return Channel{}, refuse(path, err)
	}
	q, err := queryJSON(js, kind)
	if err != nil {
		return Channel{}, refuse(path, err)
	}
	if err := validate(q, kind); err != nil {
		return Channel{}, refuse(path, err)
	}
	return Channel{Path: path, Kind: kind, Query: q, Every: every}, nil
}

// EncodeOptions is the options part of a path for a query JSON object:
// what the frontend writes (src/live.ts) and tests use.
func EncodeOptions(queryJSON []byte) string {
	return base64.RawURLEncoding.EncodeToString(queryJSON)
}

func refuse(path string, err error) error {
	const maxShown = 80 // a long path is mostly base64; its head identifies it
	if len(path) > maxShown {
		path = path[:maxShown] + "…"
	}
	return fmt.Errorf("%w: path %q: %w", ErrBadPath, path, err)
}

func parseKind(s string) (models.QueryType, error) {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		if string(k) == s {
			return k, nil
		}
		names[i] = string(k)
	}
	if s == "" {
		return "", fmt.Errorf("kind is missing; allowed: %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("kind %q is unknown; allowed: %s", s, strings.Join(names, ", "))
}

// Hashed starts the path form whose options are in the subscription's data.
const Hashed = "sha256"

// optionsPart is the encoded options: the path's rest, or for a hashed
// path the data's options, once their hash is the path's.
func optionsPart(rest string, data []byte) (string, error) {
	sum, hashed := strings.CutPrefix(rest, Hashed+"/")
	if !hashed {
		return rest, nil
	}
	var d struct {
		Options string `json:"options"`
	}
	if len(data) == 0 || json.Unmarshal(data, &d) != nil || d.Options == "" {
		return "", fmt.Errorf("a %s/ path needs its options in the subscription's data, {\"options\": \"<base64url options>\"}", Hashed)
	}
	if HashOptions(d.Options) != sum {
		return "", fmt.Errorf("the data's options do not match the path's SHA-256")
	}
	return d.Options, nil
}

// HashOptions is the path part of encoded options sent in the data.
func HashOptions(encoded string) string {
	sum := sha256.Sum256([]byte(encoded))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func decodeOptions(s string) (map[string]json.RawMessage, error) {
	if s == "" {
		return map[string]json.RawMessage{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("options are not base64url (RFC 4648 §5, unpadded) JSON: %v", err)
	}
	var js map[string]json.RawMessage
	if err := json.Unmarshal(raw, &js); err != nil || js == nil {
		return nil, fmt.Errorf("options are not a JSON object: %s", firstLine(raw, err))
	}
	return js, nil
}

func firstLine(raw []byte, err error) string {
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// parseEvery reads "every" (default: the scrape interval); a tick shorter
// than the scrape interval or MinEvery is refused, not raised, so the
// panel never claims a rate it does not get.
func parseEvery(js map[string]json.RawMessage, scrape time.Duration) (time.Duration, error) {
	floor := max(scrape, MinEvery)
	raw, ok := js["every"]
	if !ok {
		return floor, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("every is %s, not a duration string such as \"5s\"", raw)
	}
	d, err := model.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("every %q is not a Prometheus duration such as \"5s\"", s)
	}
	if time.Duration(d) < MinEvery {
		return 0, fmt.Errorf("every %s is below %s, the shortest live interval", s, MinEvery)
	}
	if time.Duration(d) < scrape {
		return 0, fmt.Errorf("every %s is below the data source's scrape interval (scrapeInterval = %s); Prometheus has nothing newer to push", s, scrape)
	}
	return time.Duration(d), nil
}

// queryJSON is the options without "every", with queryType set to kind
// (a different queryType in the options is refused).
func queryJSON(js map[string]json.RawMessage, kind models.QueryType) (json.RawMessage, error) {
	if raw, ok := js["queryType"]; ok {
		var qt string
		if err := json.Unmarshal(raw, &qt); err != nil || qt != string(kind) {
			return nil, fmt.Errorf("queryType %s in the options differs from the path's kind %q", raw, kind)
		}
	}
	delete(js, "every")
	js["queryType"], _ = json.Marshal(kind)
	return json.Marshal(js)
}

// validate parses the query as QueryData would, and refuses dashboard
// variables: the browser replaces them before it subscribes, so one left
// here would match nothing, silently.
func validate(q json.RawMessage, kind models.QueryType) error {
	now := time.Now()
	parsed, err := models.ParseQuery(models.Request{RefID: "live", QueryType: string(kind), JSON: q,
		TimeRange: models.TimeRange{From: now.Add(-time.Minute), To: now}, Interval: time.Second, MaxDataPoints: 10})
	if err != nil {
		return err
	}
	fields := map[string][]string{"models": parsed.Models, "instances": parsed.Instances, "engines": parsed.Engines, "matchers": {parsed.Matchers}}
	for _, field := range []string{"models", "instances", "engines", "matchers"} {
		for _, v := range fields[field] {
			if name, ok := interval.HasUnresolvedVariable(v); ok {
				return fmt.Errorf("%s holds %s, a dashboard variable the browser did not replace", field, name)
			}
		}
	}
	return nil
}
