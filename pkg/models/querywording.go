package models

import "fmt"

// TypeWording is how the editor names a query type in its type picker: a
// short label and a one-line description. It is UI wording, not a rule the
// backend applies, but it lives in the type's table entry so that adding a
// query type is one Go change: SchemaTS writes it into src/queryTypes.gen.ts.
type TypeWording struct {
	Label       string
	Description string
}

// queryWording is every query type's wording in the editor's type picker.
// SchemaTS (and so TestQueryTypesTS) fails while a type of the table lacks
// its entry or an entry names a type the table does not have.

// Wording returns the editor's wording of query type qt; ok is false for a
// type without one.
func Wording(qt QueryType) (w TypeWording, ok bool) {
	spec, ok := Spec(qt)
	return spec.Wording, ok
}

// checkWording is nil when every type of the table has its wording, with a
// label and a description.
func checkWording() error {
	for _, t := range schema.Types {
		if t.Wording.Label == "" || t.Wording.Description == "" {
			return fmt.Errorf("query type %q: its table entry needs a label and a description (worded)", t.Type)
		}
	}
	return nil
}

// worded sets the type's wording in the editor's type picker.
func (s TypeSpec) worded(label, description string) TypeSpec {
	s.Wording = TypeWording{Label: label, Description: description}
	return s
}
