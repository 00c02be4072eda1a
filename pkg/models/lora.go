package models

// QueryLoRA is the LoRA adapters each server runs and queues.
const QueryLoRA QueryType = "lora"

// LoRAOptions are the lora type's options. vLLM's LoRA gauge is one per API
// server (no model_name, no engine), so the query table allows the
// instance grouping only.
type LoRAOptions struct {
	// Format is "table" (default), one row per instance with its adapters
	// now, or "series", the running and waiting adapter counts per
	// instance over time.
	Format string `json:"format"`
}
