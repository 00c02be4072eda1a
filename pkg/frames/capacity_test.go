package frames

import (
	"testing"

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
