package prom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// matrixJSON is Prometheus' answer for n series of points samples, the way
// Prometheus writes it (integral and fractional timestamps, NaN, Inf).
func matrixJSON(n, points int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"__name__":"vllm:num_requests_waiting","instance":"10.0.%d.%d:8000","engine":"0","model_name":"m"},"values":[`, i/250, i%250)
		for j := range points {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%d.%03d,"%d"]`, 1_700_000_000+5*j, j%1000, (i*j)%97)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}}`)
	return b.Bytes()
}

// TestDecodeMatchesClientGolang decodes the same bodies with the streaming
// decoder and with client_golang's model types: same labels, times, values.
func TestDecodeMatchesClientGolang(t *testing.T) {
	bodies := map[string][]byte{
		"generated": matrixJSON(3, 50),
		"special values": []byte(`{"status":"success","data":{"resultType":"matrix","result":[` +
			`{"metric":{"a":"x\"y\\z","b":"ünï"},"values":[[1435781451.781,"NaN"],[1435781452,"+Inf"],[1435781453.5,"-Inf"],[1435781454.001,"1e-300"],[1435781455.999,"-0.25"]]}]}}`),
		"empty": []byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`),
		// The hand-parsed forms and their edges: 0–3 decimals, integers
		// at and past 15 digits, signs, exponents, a negative zero.
		"number forms": []byte(`{"status":"success","data":{"resultType":"matrix","result":[` +
			`{"metric":{},"values":[[1700000000,"0"],[1700000000.5,"-7"],[1700000000.25,"999999999999999"],` +
			`[1700000000.125,"1000000000000000"],[1700000000.0,"-0"],[1700000000.9,"+3"],[1700000000.1234,"12345678901234567890"],` +
			`[1700000001,"3.0"],[1700000002,"1e6"],[0.001,"-123456789012345"],[17,"007"]]}]}}`),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			res, err := decodeResponse(bytes.NewReader(body))
			require.NoError(t, err)
			require.Equal(t, "matrix", res.resultType)
			var env struct {
				Data struct {
					Result model.Matrix `json:"result"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(body, &env))
			want := env.Data.Result
			require.Len(t, res.matrix, len(want))
			for i, s := range res.matrix {
				for k, v := range want[i].Metric {
					require.Equal(t, string(v), s.Labels[string(k)])
				}
				require.Len(t, s.Labels, len(want[i].Metric))
				require.Len(t, s.Values, len(want[i].Values))
				for j, p := range want[i].Values {
					require.True(t, p.Timestamp.Time().Equal(s.Times[j]), "time %d: %v vs %v", j, p.Timestamp.Time(), s.Times[j])
					require.Equal(t, time.UTC, s.Times[j].Location())
					wv, gv := float64(p.Value), s.Values[j]
					require.True(t, wv == gv || (math.IsNaN(wv) && math.IsNaN(gv)), "value %d: %v vs %v", j, wv, gv)
				}
			}
		})
	}
}

func TestDecodeEnvelope(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		code       int
		wantType   string
		wantPoints int
		wantWarn   []string
		wantErr    string // from decoding
		wantAPIErr string // from the envelope
	}{
		{name: "result before resultType", body: `{"data":{"result":[{"values":[[1,"2"]],"metric":{"a":"b"}}],"resultType":"matrix"},"status":"success"}`,
			code: 200, wantType: "matrix", wantPoints: 1},
		{name: "vector", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"2"]},{"metric":{},"value":[1,"3"]}]}}`,
			code: 200, wantType: "vector", wantPoints: 2},
		{name: "warnings and infos kept or skipped", body: `{"status":"success","data":{"resultType":"matrix","result":[]},"warnings":["w1","w2"],"infos":["i"]}`,
			code: 200, wantType: "matrix", wantWarn: []string{"w1", "w2"}},
		{name: "native histograms skipped", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"histograms":[[1,{"count":"2","sum":"3","buckets":[[0,"0","1","2"]]}]]}]}}`,
			code: 200, wantType: "matrix"},
		{name: "error envelope", body: `{"status":"error","errorType":"bad_data","error":"parse error at char 3","data":null}`,
			code: 400, wantAPIErr: "bad_data: parse error at char 3"},
		{name: "success on an error code", body: `{"status":"success","data":{"resultType":"matrix","result":[]}}`,
			code: 422, wantType: "matrix", wantAPIErr: "inconsistent body"},
		{name: "garbage sample", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[["x","y"]]}]}}`, wantErr: "invalid JSON: readNumberAsString: invalid number"},
		{name: "value not a number", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"many"]]}]}}`, wantErr: `value "many" is not a number`},
		{name: "three elements", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"2","3"]]}]}}`, wantErr: "more than two"},
		{name: "truncated", body: `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"2"],[2,`, wantErr: "invalid JSON: ReadStringAsSlice"},
		{name: "not json", body: `<html>gateway</html>`, wantErr: "invalid JSON: ReadObject"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := decodeResponse(strings.NewReader(tt.body))
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.wantAPIErr != "" {
				require.ErrorContains(t, res.apiError(tt.code), tt.wantAPIErr)
				return
			}
			require.NoError(t, res.apiError(tt.code))
			require.Equal(t, tt.wantType, res.resultType)
			require.Equal(t, tt.wantPoints, res.matrix.Points())
			require.Equal(t, tt.wantWarn, res.warnings)
		})
	}
}

func TestCappedReader(t *testing.T) {
	body := matrixJSON(2, 10)
	tests := []struct {
		name string
		max  int64
		over bool
	}{
		{"exactly the cap", int64(len(body)), false},
		{"one byte over", int64(len(body)) - 1, true},
		{"far over", 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cappedReader{r: bytes.NewReader(body), left: tt.max}
			_, err := decodeResponse(c)
			require.Equal(t, tt.over, c.over())
			if !tt.over {
				require.NoError(t, err)
			}
		})
	}
}

// BenchmarkDecodeMatrix decodes 1,000 series × 720 points (a 1-hour panel
// at 5 s over a 1,000-engine fleet, about 30 MB of JSON) from a stream.
func BenchmarkDecodeMatrix(b *testing.B) {
	body := matrixJSON(1000, 720)
	perPoint(b, body, 1000*720, func() {
		res, err := decodeResponse(bytes.NewReader(body))
		if err != nil || len(res.matrix) != 1000 {
			b.Fatal(err)
		}
	})
}

// BenchmarkDecodeMatrixClientGolang is the old path on the same body:
// the whole body in memory, then encoding/json into model.Matrix.
func BenchmarkDecodeMatrixClientGolang(b *testing.B) {
	body := matrixJSON(1000, 720)
	perPoint(b, body, 1000*720, func() {
		var env struct {
			Data struct {
				Result model.Matrix `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			b.Fatal(err)
		}
	})
}

// perPoint runs op b.N times and reports, besides the usual figures,
// nanoseconds and allocations per decoded point.
func perPoint(b *testing.B, body []byte, points int, op func()) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		op()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N * points)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/point")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/point")
}
