package models

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// FuzzParseQuery feeds arbitrary query JSON: parsing must never panic, and
// whatever it accepts must satisfy the documented limits.
func FuzzParseQuery(f *testing.F) {
	seeds := []string{
		`{"queryType":"queue"}`, `{"queryType":"waitTime","quantiles":[0.5,0.99],"family":"itl","live":true}`,
		`{"queryType":"topk","k":"7","rankBy":"wait_p99","aggregation":"avg","grouping":"instance_engine"}`,
		`{"queryType":"preemptions","asSeries":true,"models":["a\"b","\\","(.*)"]}`,
		`{`, `null`, `[]`, `{"queryType":1}`, `{"queryType":"waitTime","quantiles":[1e308,-0,"x"]}`,
		`{"queryType":"topk","k":1e400}`, `{"queryType":"topk","k":-1}`, `{"queryType":"queue","models":[""]}`,
		`{"queryType":"queue","engines":["\u0000"],"grouping":"instance_engine"}`,
		`{"queryType":"fleet","matchers":"namespace=\"a\""}`, `{"queryType":"fleet","grouping":"instance","format":"series"}`,
		`{"queryType":"saturation","grouping":"instance_engine","format":"table"}`, `{"queryType":"saturation","format":7}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		now := time.Unix(1_700_000_000, 0)
		q, err := ParseQuery(backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), TimeRange: backend.TimeRange{From: now.Add(-time.Hour), To: now}})
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("error %v does not wrap ErrInvalidQuery", err)
			}
			return
		}
		for _, v := range q.Quantiles {
			if !(v > 0 && v < 1) {
				t.Fatalf("accepted quantile %v", v)
			}
		}
		if q.Type == QueryFleet && (q.Format != "table" || q.Grouping != GroupInstanceEngine) {
			t.Fatalf("fleet accepted format %q grouping %q", q.Format, q.Grouping)
		}
		if q.Type == QuerySaturation && (oneOf("format", q.Format, DiagnosisFormats) != nil || (q.Grouping != GroupInstance && q.Grouping != GroupInstanceEngine)) {
			t.Fatalf("saturation accepted format %q grouping %q", q.Format, q.Grouping)
		}
		if q.Type == QueryTopK && (q.K < 1 || q.K > MaxK) {
			t.Fatalf("accepted k %d", q.K)
		}
	})
}
