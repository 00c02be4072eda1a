package models

import (
	"regexp"
	"strconv"
	"strings"
)

// decimal is the number syntax options accept when they arrive as text (a
// dashboard variable's value): the query table's NumberPattern, which the
// editor reads too (src/queryTypes.json), so both sides accept the same
// strings. strconv.ParseFloat alone would also take "Inf", "NaN", "1_000"
// and hex floats ("0x1p4"); fmt.Sscanf("%g") would take a prefix ("5x" as 5).
var decimal = regexp.MustCompile(schema.NumberPattern)

// parseNumber reads a whole string, surrounding spaces aside, as a finite
// decimal number; ok is false for anything else.
func parseNumber(s string) (f float64, ok bool) {
	t := strings.TrimSpace(s)
	if !decimal.MatchString(t) {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	// An exponent too large for float64 ("1e400") is out of range: not a number.
	return f, err == nil
}
