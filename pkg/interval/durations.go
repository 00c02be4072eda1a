package interval

import (
	"strconv"
	"strings"
	"time"
)

// PromDuration writes d as a PromQL duration in one unit: whole seconds
// ("90s", "0s") when d is a whole number of seconds, else milliseconds
// ("250ms", "1500ms"; anything finer than a millisecond is dropped, as in
// 1.5ms → "1ms"). Range selectors, subqueries and offsets read it as is.
func PromDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

// Compact writes d as a person would, and as time.ParseDuration reads it
// back: time.Duration.String without its zero tails ("3m", not "3m0s";
// "1h", not "1h0m0s"; 90s is "1m30s"; "1h0m30s" keeps its inner zero).
func Compact(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
