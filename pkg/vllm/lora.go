package vllm

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// LoRAInfo is vLLM's LoRA gauge (vllm/v1/metrics/loggers.py): one series
// per set of adapters a server has had, its labels max_lora,
// running_lora_adapters and waiting_lora_adapters (adapter names joined by
// commas) and its value the unix time that set was last current. Old sets
// stay exported with their last time, so the newest series (largest value)
// of a server is its state now. It has no model_name and no engine.
const LoRAInfo SignalKey = "lora_info"

// LoRA label names.
const (
	LoRAMaxLabel     = "max_lora"
	LoRARunningLabel = "running_lora_adapters"
	LoRAWaitingLabel = "waiting_lora_adapters"
	LoRAEnableFlag   = "--enable-lora"
)

// LoRA is the lora query's range expression: per server, the newest
// adapter set at each step. topk keeps one series per server and step,
// so the old sets, exported for ever, cost nothing after the first
// sample they lose. Counting the adapters in a set is done in Go
// (LoRAStates): PromQL cannot count the names inside a label value.
//
// The gauge has no model_name or engine label, so model and engine
// filters select servers by their engines instead: the servers that run
// an engine matching them.
func (b Builder) LoRA(f models.Filters) string {
	own := models.Filters{Instances: f.Instances, Labels: f.Labels}
	id := b.IdentityLabels()
	keep := append(append([]string(nil), id...), LoRAMaxLabel, LoRARunningLabel, LoRAWaitingLabel)
	expr := agg("max", keep, b.union(LoRAInfo, own, ""))
	if len(f.Models) > 0 || len(f.Engines) > 0 {
		expr = fmt.Sprintf("(%s and on (%s) %s)", expr, strings.Join(id, ", "), agg("group", id, b.EngineSelector(f)))
	}
	return fmt.Sprintf("topk by (%s) (1, %s)", strings.Join(id, ", "), expr)
}

// LoRAServer is one server's LoRA adapters: Latest is the newest set in
// the answer, Steps the newest set at each step.
type LoRAServer struct {
	Instance string
	// Labels are the server's identity labels.
	Labels map[string]string
	Latest LoRAState
	Steps  []LoRAState
}

// LoRAState is one adapter set as vLLM reported it.
type LoRAState struct {
	Time    time.Time // the step of the answer
	Updated time.Time // the gauge's value: when vLLM last reported this set
	Running []string
	Waiting []string
	// MaxLoRA is max_lora as exported ("0" when LoRA is off on V0);
	// MaxLoRAs is it parsed, -1 when it is not a number.
	MaxLoRA  string
	MaxLoRAs int
}

// Enabled reports whether the server runs with LoRA: V0 exports the gauge
// even without it, with max_lora="0" and no adapters.
func (s LoRAState) Enabled() bool {
	return s.MaxLoRAs != 0 || len(s.Running) > 0 || len(s.Waiting) > 0
}

// Adapters splits vLLM's comma-joined adapter names; "" is no adapter.
func Adapters(joined string) []string {
	if strings.TrimSpace(joined) == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(joined, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// LoRAStates reads the answer of Builder.LoRA: per server (named by
// instanceOf) and step, the series with the largest value wins, which is
// the newest adapter set even where topk was not applied; ties go to the
// series that sorts first by labels, so the result is stable. Servers come
// sorted by name.
func LoRAStates(m series.Matrix, identity []string, instanceOf func(map[string]string) string) []LoRAServer {
	type best struct {
		value float64
		s     *series.Series
	}
	perServer := map[string]map[int64]best{}
	labels := map[string]map[string]string{}
	for _, s := range loraSortedByLabels(m) {
		name := instanceOf(s.Labels)
		if perServer[name] == nil {
			perServer[name], labels[name] = map[int64]best{}, pickLabels(s.Labels, identity)
		}
		steps := perServer[name]
		for i, t := range s.Times {
			v, k := s.Values[i], t.UnixMilli()
			if b, ok := steps[k]; !math.IsNaN(v) && (!ok || v > b.value) {
				steps[k] = best{v, s}
			}
		}
	}
	out := make([]LoRAServer, 0, len(perServer))
	for name, steps := range perServer {
		srv := LoRAServer{Instance: name, Labels: labels[name]}
		keys := make([]int64, 0, len(steps))
		for k := range steps {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			srv.Steps = append(srv.Steps, loraState(time.UnixMilli(k), steps[k].value, steps[k].s.Labels))
		}
		if len(srv.Steps) == 0 {
			continue
		}
		srv.Latest = srv.Steps[len(srv.Steps)-1]
		out = append(out, srv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out
}

func loraState(at time.Time, value float64, ls map[string]string) LoRAState {
	max, err := strconv.Atoi(strings.TrimSpace(ls[LoRAMaxLabel]))
	if err != nil {
		max = -1
	}
	sec, frac := math.Modf(value)
	return LoRAState{Time: at, Updated: time.Unix(int64(sec), int64(frac*1e9)).UTC(), Running: Adapters(ls[LoRARunningLabel]),
		Waiting: Adapters(ls[LoRAWaitingLabel]), MaxLoRA: ls[LoRAMaxLabel], MaxLoRAs: max}
}

// pickLabels copies the listed labels.
func pickLabels(ls map[string]string, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		out[n] = ls[n]
	}
	return out
}

// loraSortedByLabels orders series by their label sets, for stable tie-breaks.
func loraSortedByLabels(m series.Matrix) series.Matrix {
	out := append(series.Matrix(nil), m...)
	key := func(s *series.Series) string {
		names := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			names = append(names, k)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, k := range names {
			b.WriteString(k + "\x00" + s.Labels[k] + "\x00")
		}
		return b.String()
	}
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// LoRACounts turns servers into count series for frames: per server, the
// running and waiting adapter counts at each step, tagged with
// SignalTagLabel running_adapters / waiting_adapters and labelled with the
// server's identity labels.
func LoRACounts(servers []LoRAServer) series.Matrix {
	var out series.Matrix
	for _, srv := range servers {
		run, wait := countSeries(srv, "running_adapters"), countSeries(srv, "waiting_adapters")
		for _, st := range srv.Steps {
			run.Times, run.Values = append(run.Times, st.Time), append(run.Values, float64(len(st.Running)))
			wait.Times, wait.Values = append(wait.Times, st.Time), append(wait.Values, float64(len(st.Waiting)))
		}
		out = append(out, run, wait)
	}
	return out
}

func countSeries(srv LoRAServer, signal string) *series.Series {
	ls := make(map[string]string, len(srv.Labels)+1)
	for k, v := range srv.Labels {
		ls[k] = v
	}
	ls[SignalTagLabel] = signal
	return &series.Series{Labels: ls}
}

// LoRAMissingText is the info notice for servers that export no LoRA gauge.
func LoRAMissingText(prefix string) string {
	return fmt.Sprintf("The selected servers export no %slora_requests_info: LoRA is not enabled on them. "+
		"vLLM V1 exports this gauge only when it runs with %s (and --max-loras, --lora-modules).", prefix, LoRAEnableFlag)
}

// LoRADisabledText is the info notice for servers whose gauge says LoRA is
// off (V0 exports it always, with max_lora="0"); all says every selected
// server is such.
func LoRADisabledText(servers []string, all bool) string {
	if all {
		return fmt.Sprintf("LoRA is not enabled on the selected servers: they report max_lora=\"0\" and no adapter (vLLM V0 exports the LoRA gauge even without %s).", LoRAEnableFlag)
	}
	return fmt.Sprintf("LoRA is not enabled on %d of the selected servers (max_lora=\"0\", no adapter), left out: %s.", len(servers), loraShortList(servers, 10))
}

// loraShortList joins up to n names and says how many more there are.
func loraShortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// SameLists reports whether every server's newest set lists the same
// adapters as running and as waiting, and some server lists any. Current
// V1 writes every adapter with a request its frontend tracks into both
// labels (vllm/v1/metrics/stats.py LoRARequestStates.update_scheduler_stats
// fills both dicts with every adapter, loggers.py joins their keys), so
// the two lists are the adapters with requests in flight, not a split.
func SameLists(servers []LoRAServer) bool {
	some := false
	for _, s := range servers {
		if strings.Join(s.Latest.Running, ",") != strings.Join(s.Latest.Waiting, ",") {
			return false
		}
		some = some || len(s.Latest.Running) > 0
	}
	return some
}

// LoRASameListsText explains running and waiting columns that are equal.
func LoRASameListsText(prefix string) string {
	return "Running and waiting list the same adapters: current vLLM V1 writes every adapter that has a request in flight (from its first output until it finishes) " +
		"into both labels of " + prefix + "lora_requests_info, so they say which adapters are in use, not which wait for a LoRA slot."
}
