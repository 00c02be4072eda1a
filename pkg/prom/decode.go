package prom

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/inferops/vllm-datasource/pkg/prom/series"
)

// Series and Matrix are the decoded result types, kept in pkg/prom/series
// so that packages which only read results need not build this client;
// the aliases keep their names here for every caller of the client.
type (
	Series = series.Series
	Matrix = series.Matrix
)

// apiResponse is Prometheus' JSON envelope, with the result already decoded.
type apiResponse struct {
	status, errorType, errorMsg, resultType string
	matrix                                  Matrix
	warnings                                []string
}

// errTooLarge is returned by cappedReader once the cap is passed.
var errTooLarge = errors.New("response too large")

// cappedReader stops a body after max bytes, so the decoder fails instead
// of reading without bound.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

func (c *cappedReader) over() bool { return c.left < 0 }

// decodeBufSize is the decoder's read buffer: large enough that a point
// rarely straddles two reads, small enough to stay out of the way.
const decodeBufSize = 64 << 10

// decodeResponse reads Prometheus' JSON envelope as it arrives, decoding a
// vector or matrix result straight into columns. It never holds the body.
func decodeResponse(r io.Reader) (*apiResponse, error) {
	iter := jsoniter.Parse(jsoniter.ConfigDefault, r, decodeBufSize)
	out := &apiResponse{}
	for field := iter.ReadObject(); field != ""; field = iter.ReadObject() {
		switch field {
		case "status":
			out.status = iter.ReadString()
		case "errorType":
			out.errorType = iter.ReadString()
		case "error":
			out.errorMsg = iter.ReadString()
		case "warnings":
			out.warnings = readStrings(iter)
		case "data":
			readData(iter, out)
		default:
			iter.Skip()
		}
	}
	if iter.Error != nil && !errors.Is(iter.Error, io.EOF) {
		return nil, shortJSONError(iter.Error)
	}
	return out, nil
}

// shortJSONError drops the body excerpts json-iterator appends to its
// errors ("…, error found in #10 byte of …"), which would put pieces of a
// large answer into a panel's error message.
func shortJSONError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ", error found in"); i >= 0 {
		return fmt.Errorf("invalid JSON: %s", msg[:i])
	}
	return err
}

func readStrings(iter *jsoniter.Iterator) []string {
	var out []string
	for iter.ReadArray() {
		out = append(out, iter.ReadString())
	}
	return out
}

// readData reads {"resultType": …, "result": […]}, in either order.
func readData(iter *jsoniter.Iterator, out *apiResponse) {
	for field := iter.ReadObject(); field != ""; field = iter.ReadObject() {
		switch field {
		case "resultType":
			out.resultType = iter.ReadString()
		case "result":
			out.matrix = readResult(iter)
		default:
			iter.Skip()
		}
	}
}

// readResult reads the elements of a matrix ("values") or a vector
// ("value"); native histograms, which no frame here shows, are skipped.
func readResult(iter *jsoniter.Iterator) Matrix {
	if iter.WhatIsNext() != jsoniter.ArrayValue {
		iter.Skip()
		return nil
	}
	m := Matrix{}
	hint := 0
	for iter.ReadArray() {
		if iter.WhatIsNext() != jsoniter.ObjectValue {
			// A scalar's or a string's [time, value]: not series; the
			// caller names the result type it got.
			skipRest(iter)
			return nil
		}
		s := &Series{Labels: map[string]string{}}
		for field := iter.ReadObject(); field != ""; field = iter.ReadObject() {
			switch field {
			case "metric":
				readLabels(iter, s.Labels)
			case "values":
				readPoints(iter, s, hint)
			case "value":
				readPoint(iter, s)
			default:
				iter.Skip()
			}
		}
		if iter.Error != nil {
			return nil
		}
		// Most series of one answer have the same length: size the next
		// one's columns from this one's, so they are allocated once.
		hint = len(s.Values)
		m = append(m, s)
	}
	return m
}

// skipRest skips what is left of the array being read.
func skipRest(iter *jsoniter.Iterator) {
	for more := true; more && iter.Error == nil; more = iter.ReadArray() {
		iter.Skip()
	}
}

func readLabels(iter *jsoniter.Iterator, into map[string]string) {
	for name := iter.ReadObject(); name != ""; name = iter.ReadObject() {
		into[name] = iter.ReadString()
	}
}

func readPoints(iter *jsoniter.Iterator, s *Series, hint int) {
	if hint > 0 {
		s.Times = make([]time.Time, 0, hint)
		s.Values = make([]float64, 0, hint)
	}
	for iter.ReadArray() {
		readPoint(iter, s)
		if iter.Error != nil {
			return
		}
	}
}

// readPoint reads [<unix seconds>, "<value>"] and appends it.
func readPoint(iter *jsoniter.Iterator, s *Series) {
	if !iter.ReadArray() {
		iter.ReportError("read sample", "expected [timestamp, value]")
		return
	}
	ts := iter.ReadFloat64()
	if !iter.ReadArray() {
		iter.ReportError("read sample", "expected a value after the timestamp")
		return
	}
	raw := iter.ReadStringAsSlice()
	if iter.Error != nil {
		return
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		iter.ReportError("read sample", fmt.Sprintf("value %q is not a number", raw))
		return
	}
	if iter.ReadArray() {
		iter.ReportError("read sample", "more than two elements in a sample")
		return
	}
	s.Times = append(s.Times, time.UnixMilli(int64(math.Round(ts*1000))).UTC())
	s.Values = append(s.Values, v)
}

// DecodeMatrix reads a bare result array ([{"metric":…,"values":…},…]),
// the form recordings and tests keep.
func DecodeMatrix(r io.Reader) (Matrix, error) {
	iter := jsoniter.Parse(jsoniter.ConfigDefault, r, decodeBufSize)
	m := readResult(iter)
	if iter.Error != nil && !errors.Is(iter.Error, io.EOF) {
		return nil, shortJSONError(iter.Error)
	}
	return m, nil
}

// apiError turns an envelope into client_golang's error type, as its own
// client does, so classification stays the same.
func (r *apiResponse) apiError(code int) error {
	if r.status == "error" {
		return &v1.Error{Type: v1.ErrorType(r.errorType), Msg: r.errorMsg}
	}
	if isAPIErrorCode(code) {
		return &v1.Error{Type: v1.ErrBadResponse, Msg: "inconsistent body for response code"}
	}
	if r.status != "success" {
		return &v1.Error{Type: v1.ErrBadResponse, Msg: fmt.Sprintf("unexpected status %q", r.status)}
	}
	return nil
}

// isAPIErrorCode: the codes Prometheus answers errors with a JSON body.
func isAPIErrorCode(code int) bool { return code == 400 || code == 422 }
