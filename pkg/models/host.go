package models

// QueryHost answers the host under each vLLM instance: CPU, memory,
// network and disk pressure from the node exporter, joined by host. Its
// series are one per vLLM instance, whatever the grouping (the query table
// allows instance only, so anything else is refused rather than silently
// ignored); it has no options of its own.
const QueryHost QueryType = "host"

// HostOptions are the host type's own options: none.
type HostOptions struct{}
