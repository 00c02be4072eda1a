package models

import (
	"reflect"
	"strings"
)

// optionField is the option field of q's options struct, found by its json
// tag, or nil when q's type has no such option: table-driven tests over
// several types read one option without asserting each type's struct.
func optionField(q Query, field string) any {
	v := reflect.ValueOf(q.Options)
	if !v.IsValid() {
		return nil
	}
	for i := range v.NumField() {
		if name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); name == field {
			return v.Field(i).Interface()
		}
	}
	return nil
}
