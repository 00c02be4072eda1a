package models

// Options of the fleet and saturation query types.

// defaultGrouping is each type's grouping when none is given: the fleet
// table has a row per engine, the rest a series per instance.
func defaultGrouping(qt QueryType) Grouping {
	if qt == QueryFleet {
		return GroupInstanceEngine
	}
	return GroupInstance
}

// DiagnosisFormats are what fleet and saturation can return: "table" only
// the table, "series" only the series (saturation), "both" (default).
var DiagnosisFormats = []string{"both", "table", "series"}

// parseDiagnosis reads format for fleet (table only) and saturation.
func (q *Query) parseDiagnosis(raw rawQuery) error {
	q.Format = raw.Format
	if q.Format == "" {
		q.Format = "both"
	}
	if q.Type == QueryFleet {
		if q.Format == "both" {
			q.Format = "table"
		}
		return oneOf("format", q.Format, []string{"table"})
	}
	return oneOf("format", q.Format, DiagnosisFormats)
}
