package query

// The capacity type's what-if: per group, the twin's inputs read from the
// store (request lengths, KV cache, the engines' step-time observations,
// the batch limit) and its runs at every replica count from one to twice
// today's, and at the demand with headroom for the replicas needed.

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/twin"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// maxTwinGroups bounds the what-ifs one query runs (each costs about a
// second of CPU): groups past it get the measured figures only.
const maxTwinGroups = 8

// twinSeed fixes the twin's randomness, so a refresh of the same history
// predicts the same figures.
const twinSeed = 1

// twinInputs are the store's answers every group's twin reads from.
type twinInputs struct {
	prompt, output         map[string][]twin.Bucket // per group key
	promptMean, outputMean map[string]float64       // per group key
	hitRate                map[string]float64       // per group key
	cache                  map[string][2]int        // per server: KV blocks, block size
	exprs                  []string
}

// whatIf is one group's what-if: the twin, its predictions and the count
// meeting the objective with headroom.
type whatIf struct {
	model  twin.Model
	preds  []twin.Prediction
	needed *twin.Prediction
	// searched is the highest count tried for the replicas needed.
	searched int
}

// twinInputs reads the length histograms and the KV cache; a failed read
// leaves the what-ifs out (a notice says so), never the measured figures.
func (c capacityPlan) twinInputs(ctx context.Context, gl []string) (twinInputs, error) {
	rng := c.timeRange.End.Sub(c.timeRange.Start)
	le := c.builder.CapacityLengths(c.query.Grouping, c.query.Filters, rng)
	ce := c.builder.CapacityCacheConfig(c.query.Filters)
	he := c.builder.CapacityHitRate(c.query.Grouping, c.query.Filters, rng)
	in := twinInputs{exprs: []string{le.PromptBuckets, le.OutputBuckets, le.PromptMean, le.OutputMean, he, ce}}
	var err error
	if in.prompt, err = c.buckets(ctx, le.PromptBuckets, gl); err != nil {
		return in, err
	}
	if in.output, err = c.buckets(ctx, le.OutputBuckets, gl); err != nil {
		return in, err
	}
	if in.promptMean, err = c.perGroup(ctx, le.PromptMean, gl); err != nil {
		return in, err
	}
	if in.outputMean, err = c.perGroup(ctx, le.OutputMean, gl); err != nil {
		return in, err
	}
	if in.hitRate, err = c.perGroup(ctx, he, gl); err != nil {
		return in, err
	}
	in.cache, err = c.cacheConfig(ctx, ce)
	return in, err
}

// cacheConfig is every server's KV blocks and block size.
func (c capacityPlan) cacheConfig(ctx context.Context, expr string) (map[string][2]int, error) {
	v, _, err := c.memo.instantQuery(ctx, expr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		return nil, err
	}
	out := map[string][2]int{}
	for _, s := range v {
		blocks, _ := strconv.Atoi(string(s.Metric["num_gpu_blocks"]))
		size, _ := strconv.Atoi(string(s.Metric["block_size"]))
		out[c.builder.InstanceOf(labelMap(s.Metric))] = [2]int{blocks, size}
	}
	return out, nil
}

// perGroup is an instant expression's value per group key.
func (c capacityPlan) perGroup(ctx context.Context, expr string, gl []string) (map[string]float64, error) {
	v, _, err := c.memo.instantQuery(ctx, expr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range v {
		out[capacityKey(labelMap(s.Metric), gl)] = float64(s.Value)
	}
	return out, nil
}

// buckets reads a per-group histogram (an instant expression at the
// range's end) into each group's buckets.
func (c capacityPlan) buckets(ctx context.Context, expr string, gl []string) (map[string][]twin.Bucket, error) {
	v, _, err := c.memo.instantQuery(ctx, expr, c.timeRange.End, c.timeRange.Step)
	if err != nil {
		return nil, err
	}
	out := map[string][]twin.Bucket{}
	for _, s := range v {
		le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
		if err != nil || math.IsNaN(float64(s.Value)) {
			continue
		}
		k := capacityKey(labelMap(s.Metric), gl)
		out[k] = append(out[k], twin.Bucket{Le: le, Count: float64(s.Value)})
	}
	return out, nil
}

// twinModel is a group's twin, or the reason there is none.
func (c capacityPlan) twinModel(g vllm.CapacityGroup, e vllm.CapacityEstimate, in twinInputs, gl []string) (twin.Model, error) {
	m := twin.Model{Arrivals: e.Arrival, Step: c.timeRange.Step}
	if !(e.Arrivals > 0) {
		return m, fmt.Errorf("no requests arrived over the range, so there is no traffic to size for")
	}
	k := capacityKey(g.Labels, gl)
	var err error
	if m.Prompt, err = twin.Lengths(in.prompt[k], in.promptMean[k]); err != nil {
		return m, fmt.Errorf("prompt lengths: %w", err)
	}
	if m.Output, err = twin.Lengths(in.output[k], in.outputMean[k]); err != nil {
		return m, fmt.Errorf("output lengths: %w", err)
	}
	m.HitRate = in.hitRate[k]
	if !(m.HitRate >= 0 && m.HitRate < 1) {
		m.HitRate = 0
	}
	if m.Fit, err = twin.FitStepTime(fitPoints(g, m.HitRate)); err != nil {
		return m, err
	}
	m.MaxNumSeqs, m.BatchLimitQueued = batchLimit(g)
	// Servers of one model with different caches (another GPU, another
	// gpu_memory_utilization): the twin takes the smallest, so its
	// replicas are never roomier than the tightest real one.
	for _, srv := range g.Servers {
		if kv, ok := in.cache[srv.Name]; ok && kv[0] > 0 && (m.NumGPUBlocks == 0 || kv[0] < m.NumGPUBlocks) {
			m.NumGPUBlocks, m.BlockSize = kv[0], kv[1]
		}
	}
	return m, nil
}

// fitPoints are every server-step of the group as the fit reads them;
// hit is the group's prefix-cache hit rate.
func fitPoints(g vllm.CapacityGroup, hit float64) []twin.Point {
	var out []twin.Point
	for _, srv := range g.Servers {
		s := srv.Signals
		for i := range g.Times {
			out = append(out, twin.Point{Running: val(s[vllm.CapRunningAvg], i), RunningSq: val(s[vllm.CapRunningSq], i),
				ITL: val(s[vllm.CapITL], i), PromptTPS: val(s[vllm.CapPromptTPS], i), Prefill: val(s[vllm.CapPrefill], i),
				PromptMean: val(s[vllm.CapPromptMean], i), StepsPerSec: val(s[vllm.CapSteps], i),
				ComputedTPS: val(s[vllm.CapIterTokens], i) - val(s[vllm.CapGenTPS], i), HitRate: hit})
		}
	}
	return out
}

// batchLimit is the most requests any server ran, and whether requests
// waited beside them then: if so, that is the limit the scheduler kept to
// (max_num_seqs, or what the KV cache allowed); if not, the real limit
// may be higher.
func batchLimit(g vllm.CapacityGroup) (int, bool) {
	most, queued := 0.0, false
	for _, srv := range g.Servers {
		for i, v := range srv.Signals[vllm.CapRunning] {
			if math.IsNaN(v) || v < most {
				continue
			}
			w := val(srv.Signals[vllm.CapWaiting], i)
			queued = (v == most && queued) || w > 0
			most = v
		}
	}
	return int(math.Round(most)), queued
}

// runWhatIf predicts every count from one to twice today's (at least
// four), then searches upward for the fewest replicas meeting the
// objective at the demand with headroom: from the fewest meeting it
// without headroom, or past the curve when none there does, up to
// maxNeededFactor times the curve's end.
func (c capacityPlan) runWhatIf(m twin.Model, now int) (whatIf, error) {
	top := max(4, 2*now)
	counts := make([]int, top)
	for i := range counts {
		counts[i] = i + 1
	}
	preds, err := twin.Predict(m, counts, twin.Options{Seed: twinSeed})
	if err != nil {
		return whatIf{}, err
	}
	w := whatIf{model: m, preds: preds, searched: maxNeededFactor * top}
	pick := c.objective()
	from := twin.Needed(preds, c.o.Threshold, pick)
	if from == 0 {
		from = top + 1
	}
	for n := from; n <= w.searched; n++ {
		got, err := twin.Predict(m, []int{n}, twin.Options{Seed: twinSeed, Scale: 1 + c.o.Headroom})
		if err != nil {
			return w, err
		}
		if twin.Needed(got, c.o.Threshold, pick) == n {
			w.needed = &got[0]
			break
		}
	}
	return w, nil
}

// maxNeededFactor bounds the search for the replicas needed past the
// what-if's curve (each count one more run).
const maxNeededFactor = 2

// objective picks the objective's wait from a prediction.
func (c capacityPlan) objective() func(twin.Prediction) float64 {
	if c.o.Wait == models.CapacityTTFT {
		return func(p twin.Prediction) float64 { return p.TTFTP99 }
	}
	return func(p twin.Prediction) float64 { return p.QueueP99 }
}

// twinNotice states the fitted engine and how well it fits.
func twinNotice(name string, m twin.Model) data.Notice {
	batch := fmt.Sprintf("batch limit %d (the most seen running, with requests waiting beside them)", m.MaxNumSeqs)
	if !m.BatchLimitQueued {
		batch = fmt.Sprintf("batch limit %d, the most seen running; no request waited beside them, so the engines' "+
			"real limit may be higher and the predictions for fewer replicas err slow", m.MaxNumSeqs)
	}
	kv := "KV cache size unknown (no cache_config_info): not a limit in the twin"
	if m.NumGPUBlocks > 0 {
		kv = fmt.Sprintf("KV cache %d blocks of %d tokens", m.NumGPUBlocks, m.BlockSize)
	}
	return data.Notice{Severity: data.NoticeSeverityInfo, Text: fmt.Sprintf(
		"%s: the what-if's twin steps in %.2f ms + %.3f ms per running request + %.2f µs per prefill token "+
			"(fitted on %d observations, R² %.2f); %s; %s; prefix cache serving %.0f%% of prompt tokens; arrivals replayed "+
			"from the range, split at random across replicas (a least-loaded router queues less).",
		name, ms(m.Fit.Base), ms(m.Fit.PerSeq), float64(m.Fit.PerPrefillToken.Nanoseconds())/1e3,
		m.Fit.Points, m.Fit.R2, batch, kv, 100*m.HitRate)}
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func val(vals []float64, i int) float64 {
	if i < 0 || i >= len(vals) {
		return math.NaN()
	}
	return vals[i]
}
