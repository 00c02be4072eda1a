package models

// TopKOptions are the topk type's options (its entry in the query table).
type TopKOptions struct {
	// K is how many instances or engines, 1 to MaxK.
	K int `json:"k"`
	// RankBy is the signal ranked, one of RankSignals.
	RankBy string `json:"rankBy"`
	// Aggregation folds the signal over the range, one of Aggregations.
	Aggregation string `json:"aggregation"`
	// Format "table" returns only the table, "series" only the series;
	// absent (or "both") both.
	Format string `json:"format"`
	// AsSeries returns only the series (format "series" sets it too).
	AsSeries bool `json:"asSeries"`
}

// finish makes format "series" mean asSeries.
func (o *TopKOptions) finish() error {
	o.AsSeries = o.AsSeries || o.Format == "series"
	return nil
}
