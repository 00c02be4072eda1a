package interval

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// This file is this package's copy of the few helpers of the plugin SDK's
// backend/gtime package that the step math and the data source's duration
// settings need (RoundInterval, FormatInterval, ParseDuration and
// ParseIntervalStringToTimeDuration). It is a copy, not
// an import, because gtime imports the SDK's backend package and with it
// gRPC, Arrow and OpenTelemetry: some 400 packages that every fuzz run of
// this package would otherwise instrument. pkg/internal/gtimeparity pins
// these functions to gtime's, input for input.

const (
	day  = 24 * time.Hour
	week = 7 * day
	// year is Grafana's calendar year for Round and Format: 365 days.
	year = 365 * day
	// julianYear and julianMonth are the lengths Grafana's duration parser
	// gives the units "y" and "M": 365.25 days, and a twelfth of that.
	julianYear  = 365*day + 6*time.Hour
	julianMonth = julianYear / 12
)

// roundBucket is one row of Round's table: intervals up to and including
// upTo round to to.
type roundBucket struct {
	upTo, to time.Duration
}

// roundBuckets is Grafana's rounding table, in increasing order of upTo.
// Round takes the first row whose bound the interval does not exceed, so
// the order matters.
var roundBuckets = []roundBucket{
	{10 * time.Millisecond, time.Millisecond},
	{15 * time.Millisecond, 10 * time.Millisecond},
	{35 * time.Millisecond, 20 * time.Millisecond},
	{75 * time.Millisecond, 50 * time.Millisecond},
	{150 * time.Millisecond, 100 * time.Millisecond},
	{350 * time.Millisecond, 200 * time.Millisecond},
	{750 * time.Millisecond, 500 * time.Millisecond},
	{1500 * time.Millisecond, time.Second},
	{3500 * time.Millisecond, 2 * time.Second},
	{7500 * time.Millisecond, 5 * time.Second},
	{12500 * time.Millisecond, 10 * time.Second},
	{17500 * time.Millisecond, 15 * time.Second},
	{25 * time.Second, 20 * time.Second},
	{45 * time.Second, 30 * time.Second},
	{90 * time.Second, time.Minute},
	{210 * time.Second, 2 * time.Minute},
	{450 * time.Second, 5 * time.Minute},
	{750 * time.Second, 10 * time.Minute},
	{1050 * time.Second, 15 * time.Minute},
	{25 * time.Minute, 20 * time.Minute},
	{45 * time.Minute, 30 * time.Minute},
	{90 * time.Minute, time.Hour},
	{150 * time.Minute, 2 * time.Hour},
	{270 * time.Minute, 3 * time.Hour},
	{9 * time.Hour, 6 * time.Hour},
	{day, 12 * time.Hour},
	{2 * day, day},
	{week, day},
	{3 * week, week},
}

// Round returns Grafana's round interval for d (gtime.RoundInterval): a
// round duration near d, usually below it. Intervals of 10ms or less
// (zero and negative ones included) round up to 1ms, those of more than
// three weeks to 30 days, and those of two years or more to one year.
func Round(d time.Duration) time.Duration {
	for _, b := range roundBuckets {
		if d <= b.upTo {
			return b.to
		}
	}
	// The last bound is exclusive in Grafana's table, unlike the others.
	if d < 2*year {
		return 30 * day
	}
	return year
}

// formatUnits are Format's units, largest first.
var formatUnits = []struct {
	size   time.Duration
	suffix string
}{
	{year, "y"}, {day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"},
}

// Format writes d as Grafana writes $__interval (gtime.FormatInterval): a
// whole number of the largest unit it holds at least once, rounded down
// ("90s" is "1m"), with 365-day years; anything below 1ms, zero and
// negative durations included, is "1ms".
func Format(d time.Duration) string {
	for _, u := range formatUnits {
		if d >= u.size {
			return strconv.FormatInt(int64(d/u.size), 10) + u.suffix
		}
	}
	return "1ms"
}

// Parse reads an interval string as Grafana does
// (gtime.ParseIntervalStringToTimeDuration): optionally inside angle
// brackets ("<2m>"), either a bare number of seconds ("90"), a whole number
// of days, weeks, Julian months or Julian years ("2d", "1w", "3M", "1y"),
// or a Go duration ("1m30s"). Like Grafana, it does not check for overflow:
// a product too large for a Duration wraps around.
func Parse(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("invalid interval")
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	if allDigits(s) { // "" included: it fails in ParseInt, as in Grafana
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		return time.Duration(n) * time.Second, nil
	}
	return parseDuration(s)
}

// calendarUnit returns the length of a unit Parse accepts only after a
// whole number: days, weeks, Julian months and Julian years.
func calendarUnit(c byte) (time.Duration, bool) {
	switch c {
	case 'd':
		return day, true
	case 'w':
		return week, true
	case 'M':
		return julianMonth, true
	case 'y':
		return julianYear, true
	}
	return 0, false
}

// ParseDuration reads a duration as Grafana does (gtime.ParseDuration): a
// Go duration, or a whole number of days, weeks, Julian months or Julian
// years ("7d"). The data source's settings take their durations this way.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty input")
	}
	return parseDuration(s)
}

// parseDuration is gtime.ParseDuration for a non-empty s: a whole number
// followed by one calendar unit, or else a Go duration. Grafana checks
// "digits then unit" twice (a loop, then a regular expression that can
// match only what the loop accepted); once is enough.
func parseDuration(s string) (time.Duration, error) {
	num, unit := s[:len(s)-1], s[len(s)-1]
	size, ok := calendarUnit(unit)
	if !ok || !allDigits(num) {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(num) // "" (the input "d") fails here, as in Grafana
	if err != nil {
		return 0, err
	}
	return time.Duration(n) * size, nil
}

// allDigits reports whether s holds only ASCII digits (true for "").
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
