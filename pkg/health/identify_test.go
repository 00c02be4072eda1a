package health

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/stretchr/testify/require"
)

// buildInfoOnly answers buildinfo; the rest of the interface is unused.
type buildInfoOnly struct {
	Prometheus
	version string
	err     error
}

func (b buildInfoOnly) Host() string { return "store:9090" }

func (b buildInfoOnly) BuildInfo(context.Context) (v1.BuildinfoResult, error) {
	return v1.BuildinfoResult{Version: b.version}, b.err
}

func TestIdentifyNamesTheServer(t *testing.T) {
	tests := []struct {
		name, version, want string
		err                 error
	}{
		{"Prometheus 2", "2.42.0", "Prometheus 2.42.0", nil},
		{"Prometheus 3", "3.16.0", "Prometheus 3.16.0", nil},
		{"Thanos query answers with its own 0.x version", "0.42.4", "Thanos 0.42.4", nil},
		{"a version that only contains 0.", "3.0.1", "Prometheus 3.0.1", nil},
		{"no version", "", "Prometheus-compatible server at store:9090", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := identify(context.Background(), buildInfoOnly{version: tt.version, err: tt.err})
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	t.Run("unreachable is an error", func(t *testing.T) {
		_, err := identify(context.Background(), buildInfoOnly{err: errors.New("connection refused")})
		require.Error(t, err)
	})
}
