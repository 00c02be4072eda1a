package frames

import (
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/stretchr/testify/require"
)

// TestCapacityTableStackColumns: the stack autoscaler's columns appear only
// when some row has its count, with nulls for the rows it does not size.
func TestCapacityTableStackColumns(t *testing.T) {
	four, two := 4.0, 2.0
	tests := []struct {
		name    string
		rows    []CapacityRow
		desired []*float64
		current []*float64
	}{
		{name: "no row sized by the stack: no columns", rows: []CapacityRow{{Group: []string{"a"}}, {Group: []string{"b"}}}},
		{name: "one row sized", rows: []CapacityRow{{Group: []string{"a"}, StackDesired: &four, StackCurrent: &two}, {Group: []string{"b"}}},
			desired: []*float64{&four, nil}, current: []*float64{&two, nil}},
		{name: "desired without current", rows: []CapacityRow{{Group: []string{"a"}, StackDesired: &four}},
			desired: []*float64{&four}, current: []*float64{nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := CapacityTable(tt.rows, CapacityOptions{Columns: []string{"model"}, Objective: "queue_time"})
			d, di := f.FieldByName("autoscaler desired (llm-d)")
			c, ci := f.FieldByName("autoscaler current (llm-d)")
			if tt.desired == nil {
				require.Equal(t, -1, di)
				require.Equal(t, -1, ci)
				return
			}
			require.Equal(t, len(f.Fields)-2, di, "after the other columns")
			require.Equal(t, len(f.Fields)-1, ci)
			for i := range tt.rows {
				require.Equal(t, tt.desired[i], d.At(i))
				require.Equal(t, tt.current[i], c.At(i))
			}
		})
	}
}

// TestCapacityTableEnergyColumn: the energy column only when some row has
// a figure, in kWh.
func TestCapacityTableEnergyColumn(t *testing.T) {
	v := 0.28
	none := CapacityTable([]CapacityRow{{Group: []string{"a"}}}, CapacityOptions{Columns: []string{"model"}})
	_, i := none.FieldByName("energy per M tokens")
	require.Equal(t, -1, i)
	some := CapacityTable([]CapacityRow{{Group: []string{"a"}, EnergyPerMTokens: &v}, {Group: []string{"b"}}}, CapacityOptions{Columns: []string{"model"}})
	f, i := some.FieldByName("energy per M tokens")
	require.NotEqual(t, -1, i)
	require.Equal(t, "kwatth", f.Config.Unit)
	require.Equal(t, &v, f.At(0))
	require.Nil(t, f.At(1))
}

// The per-server table: the group's columns, the server, its GPUs and
// tokens, the efficiency columns; the energy column only when a row has it.
func TestCapacityServerTable(t *testing.T) {
	idle, kwh := 0.25, 0.3
	rows := []CapacityRow{
		{Group: []string{"m"}, Server: "sim-0", GPUsPerServer: 2, GenerationTPS: 100, IdleShare: &idle, EnergyPerMTokens: &kwh},
		{Group: []string{"m"}, Server: "sim-1", GPUsPerServer: 8, GenerationTPS: 50},
	}
	f := CapacityServerTable(rows, CapacityOptions{Columns: []string{"model"}, Executed: "Expr: x"})
	var names []string
	for _, fi := range f.Fields {
		names = append(names, fi.Name)
	}
	require.Equal(t, []string{"model", "server", "GPUs", "generated tokens/s", "GPU-s per M tokens", "idle share",
		"tokens/s per GPU", "cost per M tokens", "idle cost", "energy per M tokens"}, names)
	require.Equal(t, "sim-1", f.Fields[1].At(1))
	require.Equal(t, int64(8), f.Fields[2].At(1))
	require.Nil(t, f.Fields[9].At(1), "no power reading for sim-1")
	require.Equal(t, data.FrameTypeTable, f.Meta.Type)

	rows[0].EnergyPerMTokens = nil
	require.Len(t, CapacityServerTable(rows, CapacityOptions{Columns: []string{"model"}}).Fields, 9, "no energy column without a figure")
}
