package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCostSettings(t *testing.T) {
	tests := []struct {
		name    string
		js      string
		want    CostSettings
		wantErr string
	}{
		{name: "unset", js: `{}`, want: CostSettings{GPUsPerServer: 1}},
		{name: "both", js: `{"gpusPerServer": 8, "gpuHourlyCost": 2.5}`, want: CostSettings{GPUsPerServer: 8, GPUHourlyCost: 2.5, GPUsSet: true}},
		{name: "as strings", js: `{"gpusPerServer": "2", "gpuHourlyCost": "0"}`, want: CostSettings{GPUsPerServer: 2, GPUsSet: true}},
		{name: "no GPUs", js: `{"gpusPerServer": 0}`, wantErr: "gpusPerServer \"0\" is out of range"},
		{name: "half a GPU", js: `{"gpusPerServer": 1.5}`, wantErr: "gpusPerServer"},
		{name: "too many", js: `{"gpusPerServer": 1025}`, wantErr: "1 to 1024"},
		{name: "one GPU, said", js: `{"gpusPerServer": 1}`, want: CostSettings{GPUsPerServer: 1, GPUsSet: true}},
		{name: "the most GPUs", js: `{"gpusPerServer": 1024}`, want: CostSettings{GPUsPerServer: 1024, GPUsSet: true}},
		{name: "the highest cost", js: `{"gpuHourlyCost": 10000}`, want: CostSettings{GPUsPerServer: 1, GPUHourlyCost: 10000}},
		{name: "negative cost", js: `{"gpuHourlyCost": -1}`, wantErr: "gpuHourlyCost \"-1\" is out of range"},
		{name: "absurd cost", js: `{"gpuHourlyCost": 1e9}`, wantErr: "gpuHourlyCost"},
		{name: "not a number", js: `{"gpuHourlyCost": "cheap"}`, wantErr: "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCostSettings([]byte(tt.js))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidSettings)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
