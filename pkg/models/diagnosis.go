package models

// Options of the fleet and saturation query types.

// FleetOptions are the fleet type's options: its format is always the
// table ("both", the other diagnosis type's default, is the table here).
type FleetOptions struct {
	Format string `json:"format"`
	// Worst keeps the table's Worst worst rows; 0 keeps every engine.
	Worst int `json:"worst"`
	// Live streams the table to the panel through Grafana Live (pkg/live)
	// every scrape interval.
	Live bool `json:"live"`
}

// SaturationOptions are the saturation type's options.
type SaturationOptions struct {
	// Format is one of DiagnosisFormats: "table" only the table, "series"
	// only the series, "both" (default).
	Format string `json:"format"`
}
