package fleettest

import (
	"testing"

	"github.com/inferops/vllm-datasource/pkg/internal/promtest"
	"github.com/inferops/vllm-datasource/pkg/sim"
)

// RoleLabel is the target label StartRoles gives each instance with a
// role, as KServe's LLMInferenceService PodMonitor does.
const RoleLabel = "llm_isvc_role"

// PDFleet is a disaggregated V1 fleet: instances 0 and 1 prefill,
// 2 and 3 decode (each decode instance pulls every prompt's KV over
// NIXL), one model, two data-parallel engines each.
func PDFleet(seed uint64) sim.Config {
	cfg := HotFleet(seed)
	for i := range cfg.Instances {
		cfg.Instances[i] = sim.InstanceConfig{Model: "meta-llama/Llama-3.1-8B-Instruct", Engines: 2, Role: sim.RolePrefill}
		if i >= 2 {
			cfg.Instances[i].Role = sim.RoleDecode
		}
	}
	return cfg
}

// StartRoles runs the fleet and a Prometheus that scrapes each instance
// with its role as the target label RoleLabel (none for an instance
// without a role), the shape the series have behind KServe.
func StartRoles(t testing.TB, cfg sim.Config) *Env {
	t.Helper()
	env := Run(t, cfg)
	env.Prom = promtest.Start(t, promtest.Options{Groups: env.RoleGroups()})
	return env
}

// RoleGroups are the fleet's scrape targets grouped with their role label.
func (e *Env) RoleGroups() []promtest.Group {
	out := make([]promtest.Group, 0, len(e.Endpoints))
	for _, ep := range e.Endpoints {
		g := promtest.Group{Targets: []string{ep.Addr}}
		if ep.Role != "" {
			g.Labels = map[string]string{RoleLabel: ep.Role}
		}
		out = append(out, g)
	}
	return out
}
