package models

// QueryHost answers the host under each vLLM instance: CPU, memory,
// network and disk pressure from the node exporter, joined by host.
const QueryHost QueryType = "host"

// parseHost: host series are one per vLLM instance, whatever the grouping
// asked; anything else is refused rather than silently ignored.
func (q *Query) parseHost(raw rawQuery) error {
	if raw.Grouping != "" && raw.Grouping != string(GroupInstance) {
		return invalid("grouping %q is not allowed for host: host series are one per vLLM instance; allowed: instance", raw.Grouping)
	}
	q.Grouping = GroupInstance
	return nil
}
