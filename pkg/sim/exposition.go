package sim

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ContentType is what /metrics sends: the Prometheus text format 0.0.4, as
// vLLM's prometheus_client does. Prometheus 3 refuses targets without it.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family of a generation: its HELP and TYPE lines and
// a function writing one engine's series.
type family struct {
	name, help, typ string
	series          func(e *engine, w *seriesWriter)
	// hist returns the engine's histogram for histogram families; nil for
	// the others. Custom bucket lists are applied through it.
	hist func(e *engine) *histogram
}

// labelPair is one label of a series.
type labelPair struct{ name, value string }

// seriesWriter writes the series of one family for one engine in text
// format. Label order is alphabetical and numbers are formatted as Python's
// prometheus_client formats them ("8.0", "1.7476e+09", le="1.0"), so the
// output reads like real vLLM's, byte for byte where the values agree.
type seriesWriter struct {
	buf   *bytes.Buffer
	name  string
	base  []labelPair                   // model_name, and engine for V1
	wall  time.Time                     // wall time of the engine's clock
	at    func(time.Duration) time.Time // wall time of any simulated instant
	pairs []labelPair                   // scratch
}

// sample writes name{base, extra} v; extra is name, value, name, value….
func (w *seriesWriter) sample(v float64, extra ...string) {
	w.line(w.name, v, w.base, extra...)
}

// info writes a series without the base labels (cache_config_info and
// lora_requests_info carry no model_name).
func (w *seriesWriter) info(v float64, labels ...string) {
	w.line(w.name, v, nil, labels...)
}

// histogram writes the cumulative _bucket series, then _count and _sum, in
// prometheus_client's order; extra labels (name, value, …) join the base.
func (w *seriesWriter) histogram(h *histogram, extra ...string) {
	var cum uint64
	le := append(extra[:len(extra):len(extra)], "le", "")
	for i, c := range h.counts {
		cum += c
		le[len(le)-1] = "+Inf"
		if i < len(h.bounds) {
			le[len(le)-1] = pyFloat(h.bounds[i])
		}
		w.line(w.name+"_bucket", float64(cum), w.base, le...)
	}
	w.line(w.name+"_count", float64(h.count), w.base, extra...)
	w.line(w.name+"_sum", h.sum, w.base, extra...)
}

func (w *seriesWriter) line(name string, v float64, base []labelPair, extra ...string) {
	w.pairs = append(w.pairs[:0], base...)
	for i := 0; i+1 < len(extra); i += 2 {
		w.pairs = append(w.pairs, labelPair{extra[i], extra[i+1]})
	}
	slices.SortFunc(w.pairs, func(a, b labelPair) int { return strings.Compare(a.name, b.name) })
	w.buf.WriteString(name)
	if len(w.pairs) > 0 {
		w.buf.WriteByte('{')
		for i, p := range w.pairs {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.buf.WriteString(p.name)
			w.buf.WriteString(`="`)
			w.buf.WriteString(labelEscaper.Replace(p.value))
			w.buf.WriteByte('"')
		}
		w.buf.WriteByte('}')
	}
	w.buf.WriteByte(' ')
	w.buf.WriteString(pyFloat(v))
	w.buf.WriteByte('\n')
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

// writeExposition writes every family of fams for the given engines, which
// the caller has locked. Series of one family stay together, as the text
// format requires, with data-parallel ranks in rank order.
func writeExposition(buf *bytes.Buffer, fams []family, engines []*engine, wall func(time.Duration) time.Time) {
	writers := make([]seriesWriter, len(engines))
	for i, e := range engines {
		writers[i] = seriesWriter{buf: buf, base: baseLabels(e), wall: wall(e.now), at: wall}
	}
	for _, f := range fams {
		buf.WriteString("# HELP " + f.name + " " + helpEscaper.Replace(f.help) + "\n")
		buf.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
		for i, e := range engines {
			writers[i].name = f.name
			f.series(e, &writers[i])
		}
	}
}

// baseLabels are the labels every engine metric carries: model_name, and in
// V1 the data-parallel rank as engine.
func baseLabels(e *engine) []labelPair {
	base := []labelPair{{"model_name", e.model}}
	if e.gen == V1 {
		base = append(base, labelPair{"engine", strconv.Itoa(e.rank)})
	}
	return base
}

// pyFloat formats v as prometheus_client's floatToGoString does: Python's
// repr (shortest round-trip, "8.0" for whole numbers, exponent below 1e-4
// and from 1e16), except that numbers with more than six integer digits get
// a Go-style exponent ("1.7476e+09").
func pyFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == 0:
		return "0.0"
	}
	sci := strconv.FormatFloat(v, 'e', -1, 64)
	_, expStr, _ := strings.Cut(sci, "e")
	if exp, _ := strconv.Atoi(expStr); exp < -4 || exp >= 16 {
		return sci
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	if dot := strings.IndexByte(s, '.'); v > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}
