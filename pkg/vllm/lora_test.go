package vllm

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// TestLoRAExpressionParsesAndEscapes: the LoRA gauge has no model_name or
// engine label, so those filters never go on its selector (they would
// match nothing); they select servers through the engines' gauge instead.
func TestLoRAExpressionParsesAndEscapes(t *testing.T) {
	for bname, b := range builders() {
		for _, v := range nastyValues {
			t.Run(bname+"/"+v, func(t *testing.T) {
				f := models.Filters{Models: []string{v}, Instances: []string{v, "other"}, Engines: []string{"0"}}
				sels := allSelectors(t, b.LoRA(f))
				var lora, engines int
				for _, vs := range sels {
					requireMatchesExactly(t, vs, b.InstanceLabel, []string{v, "other"})
					if strings.HasSuffix(vs.Name, "lora_requests_info") {
						lora++
						for _, m := range vs.LabelMatchers {
							require.NotContains(t, []string{"model_name", "engine"}, m.Name, "the LoRA gauge has no %s label", m.Name)
						}
						continue
					}
					engines++
					requireMatchesExactly(t, vs, "model_name", []string{v})
					requireMatchesExactly(t, vs, "engine", []string{"0"})
				}
				require.Positive(t, lora)
				require.Positive(t, engines)
			})
		}
	}
}

func TestLoRAExpression(t *testing.T) {
	b := Builder{Prefix: "vllm:", InstanceLabel: "instance"}
	require.Equal(t,
		`topk by (instance) (1, max by (instance, max_lora, running_lora_adapters, waiting_lora_adapters) (vllm:lora_requests_info))`,
		b.LoRA(models.Filters{}))
	pods := Builder{Prefix: "vllm:", InstanceLabel: "instance", Identity: []string{"namespace", "pod"}}
	require.Equal(t,
		`topk by (namespace, pod) (1, max by (namespace, pod, max_lora, running_lora_adapters, waiting_lora_adapters) (vllm:lora_requests_info{namespace="ns", pod="p"}))`,
		pods.LoRA(models.Filters{Instances: []string{"ns/p"}}))
}

func TestAdapters(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil}, {" ", nil}, {"sql", []string{"sql"}}, {"sql,chat", []string{"sql", "chat"}},
		{" sql , ,chat,", []string{"sql", "chat"}}, {"a/b:1,c", []string{"a/b:1", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			require.Equal(t, tt.want, Adapters(tt.in))
		})
	}
}

func loraSeries(instance, maxLoRA, running, waiting string, t0 time.Time, values ...float64) *series.Series {
	s := &series.Series{Labels: map[string]string{"instance": instance, LoRAMaxLabel: maxLoRA, LoRARunningLabel: running, LoRAWaitingLabel: waiting}}
	for i, v := range values {
		s.Times, s.Values = append(s.Times, t0.Add(time.Duration(i)*time.Second)), append(s.Values, v)
	}
	return s
}

// TestLoRAStatesNewestWins: at each step the series whose value (the time
// vLLM last reported its set) is largest is the server's state; old sets
// that stay exported never win once a newer one exists.
func TestLoRAStatesNewestWins(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	nan := math.NaN()
	m := series.Matrix{
		// a: one adapter, then two running with one waiting from step 2.
		loraSeries("a:8000", "4", "sql", "", t0, 100, 101, 101, 101),
		loraSeries("a:8000", "4", "sql,chat", "code", t0, nan, nan, 102, 103),
		// b: LoRA off (V0), one series.
		loraSeries("b:8000", "0", "", "", t0, 100, 101, 102, 103),
		// c: a tie at step 0 goes to the series that sorts first.
		loraSeries("c:8000", "2", "z", "", t0, 100),
		loraSeries("c:8000", "2", "y", "", t0, 100),
	}
	got := LoRAStates(m, []string{"instance"}, func(ls map[string]string) string { return ls["instance"] })
	require.Len(t, got, 3)
	a := got[0]
	require.Equal(t, "a:8000", a.Instance)
	require.Equal(t, map[string]string{"instance": "a:8000"}, a.Labels)
	require.Len(t, a.Steps, 4)
	require.Equal(t, []string{"sql"}, a.Steps[1].Running)
	require.Equal(t, []string{"sql", "chat"}, a.Steps[2].Running)
	require.Equal(t, []string{"sql", "chat"}, a.Latest.Running)
	require.Equal(t, []string{"code"}, a.Latest.Waiting)
	require.Equal(t, 4, a.Latest.MaxLoRAs)
	require.Equal(t, time.Unix(103, 0).UTC(), a.Latest.Updated)
	require.Equal(t, t0.Add(3*time.Second), a.Latest.Time)
	require.True(t, a.Latest.Enabled())

	b := got[1]
	require.False(t, b.Latest.Enabled(), "max_lora 0 and no adapter: LoRA is off")
	require.Equal(t, []string{"y"}, got[2].Latest.Running)

	counts := LoRACounts(got)
	require.Len(t, counts, 6)
	require.Equal(t, "running_adapters", counts[0].Labels[SignalTagLabel])
	require.Equal(t, []float64{1, 1, 2, 2}, counts[0].Values)
	require.Equal(t, "waiting_adapters", counts[1].Labels[SignalTagLabel])
	require.Equal(t, []float64{0, 0, 1, 1}, counts[1].Values)
	require.Equal(t, "a:8000", counts[0].Labels["instance"])
}

func TestLoRAStateEnabled(t *testing.T) {
	tests := []struct {
		name string
		s    LoRAState
		want bool
	}{
		{"V0 without LoRA", LoRAState{MaxLoRA: "0"}, false},
		{"enabled, idle", LoRAState{MaxLoRA: "4", MaxLoRAs: 4}, true},
		{"unparsable max_lora", LoRAState{MaxLoRA: "x", MaxLoRAs: -1}, true},
		{"adapters with max 0 (should not happen)", LoRAState{Running: []string{"a"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.s.Enabled())
		})
	}
}

func TestLoRATexts(t *testing.T) {
	require.Contains(t, LoRAMissingText("vllm:"), "--enable-lora")
	require.Contains(t, LoRAMissingText("vllm:"), "vllm:lora_requests_info")
	require.Contains(t, LoRADisabledText(nil, true), "LoRA is not enabled")
	many := make([]string, 12)
	for i := range many {
		many[i] = "s"
	}
	require.Contains(t, LoRADisabledText(many, false), "12 of the selected servers")
	require.Contains(t, LoRADisabledText(many, false), "and 2 more")
}

func TestSameLists(t *testing.T) {
	srv := func(run, wait string) LoRAServer {
		return LoRAServer{Latest: LoRAState{Running: Adapters(run), Waiting: Adapters(wait)}}
	}
	tests := []struct {
		name    string
		servers []LoRAServer
		want    bool
	}{
		{"current V1: both labels carry the tracked adapters", []LoRAServer{srv("a,b", "a,b"), srv("", "")}, true},
		{"a real split", []LoRAServer{srv("a,b", "a,b"), srv("a", "c")}, false},
		{"nothing in use says nothing", []LoRAServer{srv("", "")}, false},
		{"no server", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, SameLists(tt.servers))
		})
	}
	require.Contains(t, LoRASameListsText("ray_vllm:"), "ray_vllm:lora_requests_info")
}
