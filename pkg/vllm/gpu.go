package vllm

import "github.com/inferops/vllm-datasource/pkg/models"

// AgentTargets is one sample per target of the Prometheus job that scrapes
// the node agents: group by (instance) (up{job="…", <agentSelector>}). The
// instance label of each is the agent's host:port, so the plugin can ask
// agents it was not given by URL. up is used because every target has it,
// whether or not its last scrape succeeded.
//
// It is not inside the data source's selector: that scopes the vLLM pods
// (namespace="inference"), and the agents' up carries their own pods'
// labels (the DaemonSet's namespace, monitoring), so the fleet selector
// found none. Only the agents' own selector applies (cluster="eu-1" where
// several clusters share the store).
func AgentTargets(a models.AgentSettings) string {
	return agg("group", []string{"instance"}, Builder{Scope: a.Selector}.ScopedSelector("up", "job="+quote(a.Job)))
}
