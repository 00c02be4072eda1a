package health

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// fleet counts what the running-requests gauge says exists right now.
type fleet struct {
	engines, instances, models int
	withEngineLabel            int
}

// countFleet asks for one sample per (instance, engine, model); both
// generations expose num_requests_running, so it sees mixed fleets whole.
func countFleet(ctx context.Context, p Prometheus, s models.Settings, now time.Time) (fleet, model.Vector, error) {
	b := builder(ctx, s)
	vec, _, err := p.Query(ctx, b.EnginesNow(models.Filters{}), now)
	if err != nil {
		return fleet{}, nil, err
	}
	return tally(vec, b), vec, nil
}

func tally(vec model.Vector, b vllm.Builder) fleet {
	engines, instances, modelSet := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var f fleet
	for _, smp := range vec {
		inst := instanceOf(b, smp.Metric)
		eng, hasEngine := smp.Metric["engine"]
		if hasEngine {
			f.withEngineLabel++
		}
		engines[inst+"\x00"+string(eng)] = true
		instances[inst] = true
		modelSet[string(smp.Metric["model_name"])] = true
	}
	f.engines, f.instances, f.models = len(engines), len(instances), len(modelSet)
	return f
}

// instanceOf names a sample's server by the identity labels.
func instanceOf(b vllm.Builder, m model.Metric) string {
	ls := make(map[string]string, len(m))
	for k, v := range m {
		ls[string(k)] = string(v)
	}
	return b.InstanceOf(ls)
}

func (f fleet) summary() string {
	return fmt.Sprintf("%s on %s serving %s",
		plural(f.engines, "engine"), plural(f.instances, "instance"), plural(f.models, "model"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
