package series

import (
	"sort"
	"time"

	"github.com/prometheus/common/model"
)

// Series is one series of a range query, decoded column by column: the
// shape a data frame's time and value fields take, with the labels read
// once. A Series may be shared by many readers (the result cache hands the
// same one to every caller), so it must never be modified after decoding.
type Series struct {
	Labels map[string]string
	Times  []time.Time
	Values []float64
}

// Matrix is the result of a range query.
type Matrix []*Series

// Points is the number of samples in the matrix.
func (m Matrix) Points() int {
	n := 0
	for _, s := range m {
		n += len(s.Values)
	}
	return n
}

// SizeBytes estimates the memory the matrix holds on the heap, for the
// result caches' budgets (see matrixBytes).
func (m Matrix) SizeBytes() int64 { return matrixBytes(m) }

// Vector is an instant query's answer (one point per series) in
// client_golang's type.
func (m Matrix) Vector() model.Vector {
	out := make(model.Vector, 0, len(m))
	for _, s := range m {
		if len(s.Values) == 0 {
			continue
		}
		metric := make(model.Metric, len(s.Labels))
		for k, v := range s.Labels {
			metric[model.LabelName(k)] = model.LabelValue(v)
		}
		out = append(out, &model.Sample{Metric: metric, Value: model.SampleValue(s.Values[0]),
			Timestamp: model.TimeFromUnixNano(s.Times[0].UnixNano())})
	}
	return out
}

// Between returns the matrix's points stamped within [from, to], dropping
// series left empty. The series are new; their columns share m's arrays,
// which nobody modifies.
func (m Matrix) Between(from, to time.Time) Matrix {
	out := make(Matrix, 0, len(m))
	for _, s := range m {
		lo := sort.Search(len(s.Times), func(i int) bool { return !s.Times[i].Before(from) })
		hi := sort.Search(len(s.Times), func(i int) bool { return s.Times[i].After(to) })
		if lo < hi {
			out = append(out, &Series{Labels: s.Labels, Times: s.Times[lo:hi:hi], Values: s.Values[lo:hi:hi]})
		}
	}
	return out
}
