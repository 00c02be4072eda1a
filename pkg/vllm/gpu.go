package vllm

// AgentTargets is one sample per target of the Prometheus job that scrapes
// the node agents, inside the scope: group by (instance) (up{…, job="…"}).
// The instance label of each is the agent's host:port, so the plugin can
// ask agents it was not given by URL. up is used because every target has
// it, whether or not its last scrape succeeded.
func (b Builder) AgentTargets(job string) string {
	return agg("group", []string{"instance"}, b.ScopedSelector("up", "job="+quote(job)))
}
