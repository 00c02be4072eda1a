package interval

import "strings"

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
