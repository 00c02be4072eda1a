package models

// parseLoRA reads the lora query's format: "table" (default), one row per
// instance with its adapters now, or "series", the running and waiting
// adapter counts per instance over time. vLLM's LoRA gauge is one per API
// server (no model_name, no engine), so the query table allows the
// instance grouping only.
func (q *Query) parseLoRA(raw rawQuery) error {
	var err error
	q.Format, err = option(QueryLoRA, "format").choose(raw.Format)
	return err
}
