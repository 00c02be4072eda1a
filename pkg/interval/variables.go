package interval

import (
	"strconv"
	"strings"
	"time"
)

// HasUnresolvedVariable reports the first template variable left in s, as
// written ("$instance", "${model:regex}", "[[job]]"), and true; or "" and
// false when there is none. Dashboard variables are interpolated by the
// frontend, so one that reaches the backend (an alert rule, a recorded
// query) cannot be resolved and callers should answer with an error naming
// it. Run it after Interpolate, which resolves the built-in ones.
//
// It recognises Grafana's three syntaxes: $name, ${name...} (up to the
// closing brace, so field paths and formats such as ${name:csv} count) and
// [[name]] / [[name:format]]. A name must start with a letter or "_", so the
// regex anchor in =~"foo$", the POSIX class [[:alpha:]] and label_replace's
// "$1" and "${1}" are not reported.
//
// Limitation: s is not parsed as PromQL, so a "$name" inside a quoted string
// (for example a label value written as "$HOME") is still reported.
func HasUnresolvedVariable(s string) (string, bool) {
	nextBrace := -2 // index of the first '}' at or after i; -1: none left; -2: not looked for yet
	for i := 0; i < len(s); i++ {
		var n int
		switch s[i] {
		case '$':
			if nextBrace != -1 && nextBrace < i {
				nextBrace = indexFrom(s, i, '}')
			}
			n = dollarVarLen(s[i:], nextBrace-i)
		case '[':
			n = bracketVarLen(s[i:])
		}
		if n > 0 {
			return s[i : i+n], true
		}
	}
	return "", false
}

// indexFrom returns the index of the first c in s at or after from, or -1.
func indexFrom(s string, from int, c byte) int {
	j := strings.IndexByte(s[from:], c)
	if j < 0 {
		return -1
	}
	return from + j
}

// dollarVarLen returns the length of a $name or ${name...} variable at the
// start of s, or 0. closeBrace is the index in s of its first '}' (negative
// when there is none); passing it in keeps HasUnresolvedVariable linear.
func dollarVarLen(s string, closeBrace int) int {
	if len(s) > 1 && s[1] == '{' {
		if !startsName(s[2:]) || closeBrace < 0 {
			return 0
		}
		return closeBrace + 1
	}
	if !startsName(s[1:]) {
		return 0
	}
	return 1 + wordLen(s[1:])
}

// bracketVarLen returns the length of a [[name]] or [[name:format]] variable
// at the start of s, or 0.
func bracketVarLen(s string) int {
	if !strings.HasPrefix(s, "[[") || !startsName(s[2:]) {
		return 0
	}
	i := 2 + wordLen(s[2:])
	if i < len(s) && s[i] == ':' {
		n := wordLen(s[i+1:])
		if n == 0 {
			return 0
		}
		i += 1 + n
	}
	if !strings.HasPrefix(s[i:], "]]") {
		return 0
	}
	return i + 2
}

// startsName reports whether s starts with a letter or underscore.
func startsName(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Interpolate replaces Grafana's built-in interval and range variables in
// expr with their values from r, in both the $__name and ${__name} forms:
//
//	$__interval           Format(r.Interval), e.g. "2m"
//	$__interval_ms        r.Interval in whole milliseconds, e.g. "120000"
//	$__interval_s         r.Interval in whole seconds, e.g. "120"
//	$__rate_interval      r.RateInterval as a Go duration, e.g. "2m15s", "1m0s"
//	$__rate_interval_ms   r.RateInterval in whole milliseconds
//	$__rate_interval_s    r.RateInterval in whole seconds
//	$__range              r.Range rounded to whole seconds with "s", e.g. "3600s"
//	$__range_s            r.Range rounded to whole seconds, e.g. "3600"
//	$__range_ms           r.Range in whole milliseconds
//
// A reference is the longest run of word characters after the "$" (or the
// whole "${...}"), so $__interval_ms is never read as $__interval followed by
// "_ms", and a name that merely starts with a built-in one, such as
// $__interval_x, is left alone. Other variables are left for
// HasUnresolvedVariable to report.
func Interpolate(expr string, r Result) string {
	if strings.IndexByte(expr, '$') < 0 {
		return expr
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(expr); i++ {
		if expr[i] != '$' {
			continue
		}
		name, width := dollarRef(expr[i:])
		value, ok := builtinValue(name, r)
		if !ok {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(expr) + 16)
		}
		b.WriteString(expr[last:i])
		b.WriteString(value)
		last = i + width
		i = last - 1
	}
	if last == 0 {
		return expr
	}
	b.WriteString(expr[last:])
	return b.String()
}

// dollarRef parses a "$name" or "${name}" reference at the start of s (which
// begins with '$') and returns the name and the reference's length in bytes.
// It returns width 0 when s holds neither form; "${name:fmt}" and other
// decorated forms are not built-in references and also return 0.
func dollarRef(s string) (name string, width int) {
	if len(s) > 1 && s[1] == '{' {
		n := wordLen(s[2:])
		if n == 0 || len(s) <= 2+n || s[2+n] != '}' {
			return "", 0
		}
		return s[2 : 2+n], n + 3
	}
	n := wordLen(s[1:])
	if n == 0 {
		return "", 0
	}
	return s[1 : 1+n], n + 1
}

// builtinValue formats the value of the built-in variable name.
func builtinValue(name string, r Result) (string, bool) {
	switch name {
	case "__interval":
		return Format(r.Interval), true
	case "__interval_ms":
		return strconv.FormatInt(r.Interval.Milliseconds(), 10), true
	case "__interval_s":
		return strconv.FormatInt(int64(r.Interval/time.Second), 10), true
	case "__rate_interval":
		return r.RateInterval.String(), true
	case "__rate_interval_ms":
		return strconv.FormatInt(r.RateInterval.Milliseconds(), 10), true
	case "__rate_interval_s":
		return strconv.FormatInt(int64(r.RateInterval/time.Second), 10), true
	case "__range":
		return strconv.FormatInt(roundedSeconds(r.Range), 10) + "s", true
	case "__range_s":
		return strconv.FormatInt(roundedSeconds(r.Range), 10), true
	case "__range_ms":
		return strconv.FormatInt(r.Range.Milliseconds(), 10), true
	}
	return "", false
}

// roundedSeconds rounds d to whole seconds via its milliseconds, as Grafana
// does for $__range.
func roundedSeconds(d time.Duration) int64 {
	ms := d.Milliseconds()
	if ms < 0 {
		return -((-ms + 500) / 1000)
	}
	return (ms + 500) / 1000
}

// wordLen returns the length of the run of word characters ([A-Za-z0-9_])
// at the start of s.
func wordLen(s string) int {
	for i := 0; i < len(s); i++ {
		if !isWordChar(s[i]) {
			return i
		}
	}
	return len(s)
}

func isWordChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
