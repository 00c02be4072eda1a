package vllm

import (
	"testing"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

func TestStackVariantsReadEitherNamespace(t *testing.T) {
	desired := model.Vector{
		{Metric: model.Metric{"variant_name": "a", "exported_namespace": "inference", "namespace": "llm-d-system"}, Value: 3},
		{Metric: model.Metric{"variant_name": "b", "namespace": "inference"}, Value: 2}, // honor_labels: the variant's own
	}
	current := model.Vector{{Metric: model.Metric{"variant_name": "a", "exported_namespace": "inference", "namespace": "llm-d-system"}, Value: 1}}
	got := StackVariants(desired, current)
	require.Equal(t, []StackVariant{
		{Name: "a", Namespace: "inference", Desired: 3, Current: 1, HasCurrent: true},
		{Name: "b", Namespace: "inference", Desired: 2},
	}, got)
}

func TestVariantOf(t *testing.T) {
	variants := []StackVariant{{Name: "vllm", Namespace: "x"}, {Name: "vllm-llama", Namespace: "x"}, {Name: "vllm-l", Namespace: "x"},
		{Name: "vllm-llama", Namespace: "y"}}
	tests := []struct {
		name, namespace, pod string
		want                 int
	}{
		{"the longest name that prefixes the pod", "x", "vllm-llama-6d9c-abcde", 1},
		{"a name must end at a dash", "x", "vllmx-1", -1},
		{"a shorter name is not a prefix of a longer word", "x", "vllm-lama-1", 0},
		{"the pod's namespace decides", "y", "vllm-llama-6d9c-abcde", 3},
		{"no variant in the namespace", "z", "vllm-llama-1", -1},
		{"the Deployment's name alone is no pod of it", "x", "vllm-llama", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, variantOf(variants, tt.namespace, tt.pod))
		})
	}
}

func TestMatchVariantsSumsPerGroup(t *testing.T) {
	variants := []StackVariant{{Name: "a", Namespace: "n", Desired: 2, Current: 1, HasCurrent: true},
		{Name: "b", Namespace: "n", Desired: 3}, {Name: "c", Namespace: "n", Desired: 9}}
	pods := model.Vector{
		{Metric: model.Metric{"namespace": "n", "pod": "a-1", "model_name": "m"}},
		{Metric: model.Metric{"namespace": "n", "pod": "a-2", "model_name": "m"}},
		{Metric: model.Metric{"namespace": "n", "pod": "b-1", "model_name": "m"}},
	}
	got, unmatched := MatchVariants(variants, pods, func(m model.Metric) string { return string(m["model_name"]) })
	require.Equal(t, map[string]StackDecision{"m": {Desired: 5, Current: 1, HasCurrent: true, Variants: []string{"n/a", "n/b"}}}, got,
		"a variant counts once however many of its pods serve the group")
	require.Equal(t, []string{"n/c"}, unmatched)
}

// TestVariantOfLongestNameWhateverTheOrder: the longest matching name
// wins whether it is listed before or after the shorter ones.
func TestVariantOfLongestNameWhateverTheOrder(t *testing.T) {
	long, short := StackVariant{Name: "vllm-llama", Namespace: "x"}, StackVariant{Name: "vllm", Namespace: "x"}
	tests := []struct {
		name     string
		variants []StackVariant
		want     int
	}{
		{"longest first", []StackVariant{long, short}, 0},
		{"longest last", []StackVariant{short, long}, 1},
		{"longest between", []StackVariant{short, long, short}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, variantOf(tt.variants, "x", "vllm-llama-6d9c-abcde"))
		})
	}
}

// TestMatchVariantsOneVariantOnTwoAccelerators: the WVA labels its decision
// with the accelerator, so one variant can appear twice (sorted by
// accelerator, say while its series for the old accelerator is still
// fresh). Its pods belong to the first entry; the second matches no pod
// and is reported unmatched, so the group's desired count is not doubled.
func TestMatchVariantsOneVariantOnTwoAccelerators(t *testing.T) {
	desired := model.Vector{
		{Metric: model.Metric{"variant_name": "vllm", "namespace": "n", "accelerator_type": "H100"}, Value: 5},
		{Metric: model.Metric{"variant_name": "vllm", "namespace": "n", "accelerator_type": "A100"}, Value: 2},
	}
	pods := model.Vector{{Metric: model.Metric{"namespace": "n", "pod": "vllm-1", "model_name": "m"}}}
	got, unmatched := MatchVariants(StackVariants(desired, nil), pods, func(m model.Metric) string { return string(m["model_name"]) })
	require.Equal(t, map[string]StackDecision{"m": {Desired: 2, Variants: []string{"n/vllm"}}}, got)
	require.Equal(t, []string{"n/vllm"}, unmatched)
}
