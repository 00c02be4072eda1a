package models

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
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
		`{"queryType":"specDecode","grouping":"instance_engine"}`, `{"queryType":"specDecode","grouping":"none","format":"x"}`,
		`{"queryType":"lora","format":"series"}`, `{"queryType":"lora","format":"both","grouping":"model"}`, `{"queryType":"lora","format":null}`,
		`{"queryType":"prefixCache","grouping":"model","models":["a\"b","(.*)|x"],"matchers":"namespace=~\"in.*\""}`,
		`{"queryType":"workload","view":"prompt","grouping":"none"}`, `{"queryType":"workload","view":"generation\u0000"}`,
		`{"queryType":"workload","view":["tokens"]}`, `{"queryType":"slo","objective":"availability","target":"0.999"}`,
		`{"queryType":"kvTransfer"}`, `{"queryType":"kvTransfer","grouping":"role","quantiles":[0.5,0.999]}`,
		`{"queryType":"kvTransfer","quantiles":[0,1,"p99"]}`, `{"queryType":"kvTransfer","grouping":"Role"}`,
		`{"queryType":"queue","grouping":"role","legend":"{{role}}"}`, `{"queryType":"saturation","grouping":"role"}`,
		`{"queryType":"topk","grouping":"role"}`, `{"queryType":"fleet","grouping":"role\u0000"}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		now := time.Unix(1_700_000_000, 0)
		q, err := ParseQuery(Request{RefID: "A", JSON: json.RawMessage(js), TimeRange: TimeRange{From: now.Add(-time.Hour), To: now}})
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) {
				t.Fatalf("error %v does not wrap ErrInvalidQuery", err)
			}
			return
		}
		quantiles, _ := optionField(q, "quantiles").([]float64)
		format, _ := optionField(q, "format").(string)
		view, _ := optionField(q, "view").(string)
		k, _ := optionField(q, "k").(int)
		for _, v := range quantiles {
			if !(v > 0 && v < 1) {
				t.Fatalf("accepted quantile %v", v)
			}
		}
		if q.Type == QueryFleet && (format != "table" || q.Grouping != GroupInstanceEngine) {
			t.Fatalf("fleet accepted format %q grouping %q", format, q.Grouping)
		}
		if q.Type == QuerySaturation && (oneOf("format", format, DiagnosisFormats) != nil || (q.Grouping != GroupInstance && q.Grouping != GroupInstanceEngine && q.Grouping != GroupRole)) {
			t.Fatalf("saturation accepted format %q grouping %q", format, q.Grouping)
		}
		if q.Type == QueryWorkload && oneOf("view", view, WorkloadViews) != nil {
			t.Fatalf("workload accepted view %q", view)
		}
		if q.Type == QueryKVTransfer && (len(quantiles) == 0 || q.Grouping == "") {
			t.Fatalf("kvTransfer accepted quantiles %v grouping %q", quantiles, q.Grouping)
		}
		if q.Type == QueryLoRA && (oneOf("format", format, LoRAFormats) != nil || q.Grouping != GroupInstance) {
			t.Fatalf("lora accepted format %q grouping %q", format, q.Grouping)
		}
		if q.Type == QueryTopK && (k < 1 || k > MaxK) {
			t.Fatalf("accepted k %d", k)
		}
	})
}
