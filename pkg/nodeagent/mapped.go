package nodeagent

import (
	"context"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// Mapper finds the vLLM server that owns a process.
type Mapper interface {
	Owner(pid int) (Owner, error)
}

// WithProcMapping wraps a Source so every process it reports is mapped to
// its vLLM server, and each GPU is labelled with the server that uses the
// most memory on it. Processes the source already mapped are kept as they
// are; processes that are not vLLM (or are gone) stay unmapped.
func WithProcMapping(src Source, m Mapper) Source {
	return SourceFunc(func(ctx context.Context) ([]agentapi.GPU, error) {
		gpus, err := src.GPUs(ctx)
		if err != nil {
			return nil, err
		}
		owners := map[int]Owner{} // a server's workers often span GPUs
		for i := range gpus {
			mapProcesses(gpus[i].Processes, m, owners)
			Summarize(&gpus[i])
		}
		return gpus, nil
	})
}

func mapProcesses(procs []agentapi.Process, m Mapper, seen map[int]Owner) {
	for i := range procs {
		p := &procs[i]
		if p.VLLMInstance != "" {
			continue
		}
		o, ok := seen[p.PID]
		if !ok {
			o, _ = m.Owner(p.PID) // unmapped processes are normal: not every GPU user is vLLM
			seen[p.PID] = o
		}
		p.VLLMInstance, p.Model = o.Instance, o.Model
	}
}

// Summarize sets a GPU's VLLMInstance and Model from its processes: the
// server whose processes use the most memory on it (ties go to the
// instance that sorts first). It leaves a GPU that already names one alone.
func Summarize(g *agentapi.GPU) {
	if g.VLLMInstance != "" {
		return
	}
	mem := map[string]float64{}
	model := map[string]string{}
	for _, p := range g.Processes {
		if p.VLLMInstance == "" {
			continue
		}
		mem[p.VLLMInstance] += value(p.UsedMemoryBytes)
		model[p.VLLMInstance] = p.Model
	}
	best, bestMem := "", -1.0
	for inst, m := range mem {
		if m > bestMem || (m == bestMem && inst < best) {
			best, bestMem = inst, m
		}
	}
	g.VLLMInstance, g.Model = best, model[best]
}

// value reads an optional reading, 0 when unknown.
func value(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
