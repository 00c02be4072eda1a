package models

// Options of the fleet and saturation query types.

// parseDiagnosis reads format for fleet (a table only: "both", the default
// of saturation, is the table there) and saturation ("both" by default).
func (q *Query) parseDiagnosis(raw rawQuery) error {
	var err error
	q.Format, err = option(q.Type, "format").choose(raw.Format)
	return err
}
