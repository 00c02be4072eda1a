package prom

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// MetricNames is LabelValues of __name__: the same request (the label's
// values endpoint, the selector as match[], the range), the same answer
// and the same error.
func TestMetricNamesAreNameLabelValues(t *testing.T) {
	var paths, matches []string
	fail := false
	c := testClient(t, func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("parse form: %v", err)
		}
		paths = append(paths, r.URL.Path)
		matches = append(matches, r.Form["match[]"]...)
		if got := r.Form.Get("end"); got != "60" {
			t.Errorf("end %q, want the range's end, 60", got)
		}
		w.Header().Set("Content-Type", "application/json")
		if fail {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running","vllm:num_requests_waiting"]}`))
	}, Options{})
	ctx := context.Background()
	sel := `{__name__=~"vllm:.+", cluster="eu-1"}`
	start, end := time.Unix(0, 0), time.Unix(60, 0)

	names, err := c.MetricNames(ctx, sel, start, end)
	require.NoError(t, err)
	vals, err := c.LabelValues(ctx, "__name__", sel, start, end)
	require.NoError(t, err)
	require.Equal(t, []string{"vllm:num_requests_running", "vllm:num_requests_waiting"}, names)
	require.Equal(t, vals, names)
	require.Equal(t, []string{"/api/v1/label/__name__/values", "/api/v1/label/__name__/values"}, paths)
	require.Equal(t, []string{sel, sel}, matches)

	fail = true
	_, nameErr := c.MetricNames(ctx, sel, start, end)
	_, valErr := c.LabelValues(ctx, "__name__", sel, start, end)
	require.Error(t, nameErr)
	require.Equal(t, valErr.Error(), nameErr.Error())
	var pe *Error
	require.True(t, errors.As(nameErr, &pe))
	require.Equal(t, "label values", pe.Op)
	require.Equal(t, KindBadQuery, pe.Kind)
}
