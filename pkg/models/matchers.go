package models

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// MaxMatchersLength bounds a selector or per-query matcher list: a few
// hundred characters is plenty for cluster, namespace and pod.
const MaxMatchersLength = 4096

// ErrInvalidMatchers is wrapped by every matcher parse error.
var ErrInvalidMatchers = errors.New("not a list of PromQL label matchers")

// parseCheck is a matcher the parser needs beside the user's: a PromQL
// selector must hold one matcher that cannot match the empty string, and
// `cluster=""` (series without a cluster label) is a legitimate scope. It
// is removed again after parsing.
const parseCheck = `__vllm_scope_check__="1"`

// ParseMatchers parses label matchers such as
// `cluster="eu-1", namespace=~"inference|batch"` with Prometheus' own
// parser; surrounding braces are allowed. The text is never pasted into a
// query: callers render the parsed matchers with labels.Matcher.String, so
// quotes and regex characters mean exactly what the parser says they mean.
// field names the setting or option in errors. Empty text means no matchers.
func ParseMatchers(field, raw string) ([]*labels.Matcher, error) {
	text := strings.TrimSpace(raw)
	if strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}") {
		text = strings.TrimSpace(text[1 : len(text)-1])
	}
	if text == "" {
		return nil, nil
	}
	if len(text) > MaxMatchersLength || !utf8.ValidString(text) {
		return nil, fmt.Errorf("%w: %s is longer than %d bytes or not UTF-8", ErrInvalidMatchers, field, MaxMatchersLength)
	}
	ms, err := parser.NewParser(parser.Options{}).ParseMetricSelector("{" + parseCheck + ", " + text + "}")
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v (write label matchers such as cluster=\"eu-1\", namespace=~\"a|b\")", ErrInvalidMatchers, field, raw, err)
	}
	out := make([]*labels.Matcher, 0, len(ms)-1)
	for _, m := range ms[1:] {
		if err := checkMatcher(field, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// checkMatcher rejects matchers on the metric name: the plugin picks the
// vLLM names itself, and a name matcher would silently empty every query.
func checkMatcher(field string, m *labels.Matcher) error {
	switch m.Name {
	case labels.MetricName:
		return fmt.Errorf("%w: %s may not match the metric name (%s); use labels such as cluster or namespace", ErrInvalidMatchers, field, m)
	case "__vllm_scope_check__":
		return fmt.Errorf("%w: %s uses a reserved label name (%s)", ErrInvalidMatchers, field, m)
	}
	return nil
}

// MatchersString renders matchers as PromQL, comma-separated, for messages
// and for building selectors.
func MatchersString(ms []*labels.Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}
