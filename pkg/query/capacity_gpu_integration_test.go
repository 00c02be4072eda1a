//go:build !mutation

package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/stretchr/testify/require"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/nodeagent"
	"github.com/inferops/vllm-datasource/pkg/query"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// agentExposition is a node agent's /metrics (its own writer) for GPUs
// mapped to vLLM servers: per server, the power of each of its GPUs.
func agentExposition(t *testing.T, node int, watts map[string][]float64) func(*bytes.Buffer) {
	var gpus []agentapi.GPU
	for server, ws := range watts {
		for _, w := range ws {
			gpus = append(gpus, agentapi.GPU{Index: len(gpus), UUID: fmt.Sprintf("GPU-%d-%d", node, len(gpus)), Name: "NVIDIA H100 80GB HBM3",
				MemoryTotalBytes: agentapi.Float(80 << 30), PowerWatts: agentapi.Float(w), VLLMInstance: server, Model: "m"})
		}
	}
	return func(buf *bytes.Buffer) { require.NoError(t, nodeagent.WriteMetrics(buf, gpus)) }
}

// TestCapacityGPUsAndEnergyFromTheNodeAgents: two servers of one model on
// two nodes whose agents map two GPUs to each (one server's drawing 300 and
// 250 W, the other's 200 W each): the table counts 2 GPUs per server from
// the agents, not the setting (which says 8), prices 4 GPUs' time, and its
// energy per million tokens is the 950 W drawn over the range against the
// tokens the simulator says it generated. A third server the agents do not
// see leaves its group without an energy figure and its GPU count from the
// setting.
func TestCapacityGPUsAndEnergyFromTheNodeAgents(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate, cfg.Engine = 9, 0, 2, capacityEngine()
	cfg.Instances = []sim.InstanceConfig{{Model: "m"}, {Model: "m"}, {Model: "unseen"}}
	tg := simTargets{Others: []otherTarget{
		{Labels: `instance="node-0:9400",job="vllm-node-agent"`, Write: agentExposition(t, 0, map[string][]float64{"sim-0": {300, 250}})},
		{Labels: `instance="node-1:9400",job="vllm-node-agent"`, Write: agentExposition(t, 1, map[string][]float64{"sim-1": {200, 200}})},
	}}
	keep := func(name string) bool {
		return capacityKeeps(name) || name == "vllm_node_gpu_memory_total_bytes" || name == "vllm_node_gpu_power_watts"
	}
	h := runSimHistoryWith(t, promtest.Prometheus2, cfg, 40*time.Minute, 15*time.Second, keep, tg)
	e := settingsExecutor(t, h.Prom.URL, `{"scrapeInterval":"15s","gpusPerServer":8,"gpuHourlyCost":2}`)
	from := h.End.Add(-30 * time.Minute)
	r, rows := capacityRows(t, e, `{"queryType":"capacity","format":"table"}`, from, h.End, "model")
	m, unseen := rows["m"], rows["unseen"]
	require.EqualValues(t, 2, m["GPUs per server"], "from the agents, not the setting's 8")
	require.EqualValues(t, 8, unseen["GPUs per server"], "no agent maps a GPU to it: the setting")
	require.InEpsilon(t, m["generated tokens/s"], m["tokens/s per GPU"].(float64)*4, 0.03, "4 GPUs make the tokens")
	require.Nil(t, unseen["energy per M tokens"], "no power reading for its server")

	tokens := rangeTokens(h, 0, 1)
	want := 950.0 * 1800 / 3.6e6 / (tokens / 1e6)
	t.Logf("energy per M tokens %.4f kWh, truth %.4f kWh (%.0f tokens)", m["energy per M tokens"], want, tokens)
	require.InEpsilon(t, want, m["energy per M tokens"], 0.05)
	require.Contains(t, noticeTexts(r.Frames), "Efficiency counts the GPUs the node agents map to 2 of 3 servers")

	// Per server: each server's GPUs, tokens and energy, against the
	// simulator's own counters for that server.
	r, servers := capacityRows(t, e, `{"queryType":"capacity","format":"servers"}`, from, h.End, "server")
	require.Len(t, r.Frames, 1)
	require.Len(t, servers, 3)
	truth := map[string]float64{}
	for i := range 3 {
		truth[fmt.Sprintf("sim-%d", i)] = rangeTokens(h, i) / 1800
	}
	for server, want := range map[string]struct {
		model string
		gpus  float64
		watts float64
	}{"sim-0": {"m", 2, 550}, "sim-1": {"m", 2, 400}, "sim-2": {"unseen", 8, 0}} {
		row := servers[server]
		require.NotNil(t, row, "rows: %v", servers)
		require.Equal(t, want.model, row["model"])
		require.EqualValues(t, want.gpus, row["GPUs"], server)
		require.InEpsilon(t, truth[server], row["generated tokens/s"], 0.05, "%s: the simulator's tokens", server)
		// per GPU counts the server's answering time (its steps), the column the range
		require.InEpsilon(t, row["generated tokens/s"].(float64)/want.gpus, row["tokens/s per GPU"], 0.02, server)
		if want.watts == 0 {
			require.Nil(t, row["energy per M tokens"], "%s: no power reading", server)
			continue
		}
		kwh := want.watts * 1800 / 3.6e6 / (truth[server] * 1800 / 1e6)
		require.InEpsilon(t, kwh, row["energy per M tokens"], 0.05, server)
	}
}

// dcgmExposition is dcgm-exporter 4.6's power reading (the shape of
// pkg/plugin/testdata/k8s/dcgm-exporter-4.6.prom) for GPUs allocated to
// pods of the namespace inference: per pod, the power of each of its GPUs.
func dcgmExposition(node string, watts map[string][]float64) func(*bytes.Buffer) {
	return func(buf *bytes.Buffer) {
		buf.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		i := 0
		for _, pod := range []string{"vllm-0", "vllm-1", "vllm-2"} {
			for _, w := range watts[pod] {
				fmt.Fprintf(buf, `DCGM_FI_DEV_POWER_USAGE{gpu="%d",UUID="GPU-%s-%d",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",hostname="%s",container="vllm",namespace="inference",pod="%s"} %g`+"\n",
					i, node, i, i, node, pod, w)
				i++
			}
		}
	}
}

// TestCapacityGPUsAndEnergyFromDCGM: on Kubernetes without node agents,
// dcgm-exporter's GPUs give the count and the energy. Two pods of model m
// hold two GPUs each (300 + 250 W and 200 + 200 W, scraped as the charts
// do, honorLabels false: the workload's labels arrive as exported_*), a
// third pod's model has none: 2 GPUs per server for m, the setting's 8 for
// the other, and m's energy per million tokens from the 950 W drawn.
func TestCapacityGPUsAndEnergyFromDCGM(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Skew, cfg.Rate, cfg.Engine = 9, 0, 2, capacityEngine()
	cfg.Instances = []sim.InstanceConfig{{Model: "m"}, {Model: "m"}, {Model: "unseen"}}
	tg := simTargets{
		Labels: func(i int) string {
			return fmt.Sprintf(`namespace="inference",pod="vllm-%d",instance="10.0.0.%d:8000",job="inference/vllm"`, i, i+1)
		},
		Others: []otherTarget{{
			Labels: `namespace="gpu-operator",pod="nvidia-dcgm-exporter-7x2k",instance="10.1.0.5:9400",job="gpu-metrics"`,
			Write:  dcgmExposition("gpu-node-0", map[string][]float64{"vllm-0": {300, 250}, "vllm-1": {200, 200}}),
		}},
	}
	keep := func(name string) bool { return capacityKeeps(name) || name == "DCGM_FI_DEV_POWER_USAGE" }
	h := runSimHistoryWith(t, promtest.Prometheus2, cfg, 40*time.Minute, 15*time.Second, keep, tg)
	e := settingsExecutor(t, h.Prom.URL, `{"scrapeInterval":"15s","profile":"llm-d","gpusPerServer":8,"gpuHourlyCost":2}`)
	from := h.End.Add(-30 * time.Minute)
	r, rows := capacityRows(t, e, `{"queryType":"capacity","format":"table"}`, from, h.End, "model")
	m, unseen := rows["m"], rows["unseen"]
	require.NotNil(t, m, "rows: %v", rows)
	require.EqualValues(t, 2, m["GPUs per server"], "from dcgm-exporter, not the setting's 8")
	require.EqualValues(t, 8, unseen["GPUs per server"], "no GPU allocated to its pod: the setting")
	require.Nil(t, unseen["energy per M tokens"])
	tokens := rangeTokens(h, 0, 1)
	want := 950.0 * 1800 / 3.6e6 / (tokens / 1e6)
	t.Logf("energy per M tokens %.4f kWh, truth %.4f kWh (%.0f tokens)", m["energy per M tokens"], want, tokens)
	require.InEpsilon(t, want, m["energy per M tokens"], 0.05)
	require.Contains(t, noticeTexts(r.Frames), "Efficiency counts the GPUs dcgm-exporter maps to 2 of 3 servers")
}

// capacityRows runs a capacity query over [from, to] at a 15 s step and
// reads its first frame's rows, keyed by the column key.
func capacityRows(t *testing.T, e *query.Executor, js string, from, to time.Time, key string) (backend.DataResponse, map[string]map[string]any) {
	t.Helper()
	r := run(t, e, backend.DataQuery{RefID: "A", JSON: json.RawMessage(js), Interval: 15 * time.Second, MaxDataPoints: 120,
		TimeRange: backend.TimeRange{From: from, To: to}}).Responses["A"]
	require.NoError(t, r.Error)
	rows := map[string]map[string]any{}
	for i := 0; i < r.Frames[0].Rows(); i++ {
		row := tableRow(t, r.Frames[0], i)
		rows[row[key].(string)] = row
	}
	return r, rows
}

// rangeTokens is the truth these tests hold the table to: the tokens the
// given instances generated in the range, from the simulator's counters at
// its end scaled to the range (steady traffic: the range is the last 30 of
// the history's 40 minutes).
func rangeTokens(h simHistory, instances ...int) float64 {
	tokens := 0.0
	for _, st := range h.Fleet.Snapshot().Engines {
		if slices.Contains(instances, st.Instance) {
			tokens += float64(st.GenerationTokens)
		}
	}
	return tokens * 30.0 / 40
}
