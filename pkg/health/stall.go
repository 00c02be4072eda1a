package health

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/prometheus/common/model"

	"github.com/inferops/vllm-datasource/pkg/interval"
	"github.com/inferops/vllm-datasource/pkg/models"
	"github.com/inferops/vllm-datasource/pkg/vllm"
)

// namedStalled is how many stalled engines the health line names; the
// rest are counted, so a wedged fleet of hundreds keeps the line short.
const namedStalled = 3

// stalls is what the stall check found: the engines stalled over the
// window (vllm.Builder.HealthStallSignals: the fleet table's definition,
// for engines watched at least that long) by name, and how many engines
// sleep now.
type stalls struct {
	window   time.Duration
	stalled  []string
	sleeping int
	err      error
}

// checkStalls asks for the fleet table's stall and sleep signals at now.
// A failed lookup is kept in err and said in the message: health has
// already proved what it must, so the check itself never fails it.
func checkStalls(ctx context.Context, p Prometheus, s models.Settings, now time.Time) stalls {
	b := builder(ctx, s)
	st := stalls{window: stallWindow(s)}
	for _, sig := range b.HealthStallSignals(models.Filters{}, st.window) {
		vec, _, err := p.Query(ctx, sig.Expr, now)
		if err != nil {
			st.err = fmt.Errorf("%s engines: %w", sig.Name, err)
			return st
		}
		switch sig.Name {
		case vllm.FleetStalled:
			st.stalled = engineNames(b, vec)
		case vllm.FleetSleeping:
			st.sleeping = countOnes(vec)
		}
	}
	return st
}

// stallWindow is the data source's stall window; settings built in code
// (not by models.ParseSettings) fall back to the setting's default.
func stallWindow(s models.Settings) time.Duration {
	if s.StallWindow > 0 {
		return s.StallWindow
	}
	return max(models.DefaultStallWindow, 2*s.ScrapeInterval)
}

// engineNames names each engine of vec as "instance engine N" (V1) or
// "instance" (V0, no engine label), sorted so the message is stable.
func engineNames(b vllm.Builder, vec model.Vector) []string {
	names := make([]string, 0, len(vec))
	for _, smp := range vec {
		name := instanceOf(b, smp.Metric)
		if eng, ok := smp.Metric["engine"]; ok {
			name += " engine " + string(eng)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// countOnes counts the engines whose sleep signal is 1 (asleep now).
func countOnes(vec model.Vector) int {
	n := 0
	for _, smp := range vec {
		if smp.Value == 1 {
			n++
		}
	}
	return n
}

// fleetWedged is true when no awake engine makes progress: every engine
// reporting is stalled or asleep, and at least one is stalled. Sleeping
// engines count with the stalled ones because they serve nothing until
// woken, so such a fleet completes no request at all, which is a failed
// test like a fleet that stopped reporting. Some engines stalled while
// others move is a warning in an OK result: Grafana has no warning status,
// and a red test would hide that the data source itself works.
func (st stalls) fleetWedged(fl fleet) bool {
	return len(st.stalled) > 0 && len(st.stalled)+st.sleeping >= fl.engines
}

// status is the health status: an error only when the fleet is wedged.
func (st stalls) status(fl fleet) backend.HealthStatus {
	if st.fleetWedged(fl) {
		return backend.HealthStatusError
	}
	return backend.HealthStatusOk
}

// note is appended to the health message: the stalled engines (warning,
// or error when fleetWedged) and the sleeping ones (info).
func (st stalls) note(fl fleet) string {
	if st.err != nil {
		return fmt.Sprintf(". Could not check for stalled engines: %v", st.err)
	}
	msg := ""
	if n := len(st.stalled); n > 0 {
		level := "Warning"
		if st.fleetWedged(fl) {
			level = "Error: no awake engine is making progress"
		}
		msg += fmt.Sprintf(". %s: %s stalled (requests queued, no progress for %s): %s — restart or drain them",
			level, plural(n, "engine"), interval.Compact(st.window), firstFew(st.stalled))
	}
	if st.sleeping > 0 {
		msg += fmt.Sprintf(". %s sleeping (sleep mode: put to sleep on purpose, neither down nor stalled)", plural(st.sleeping, "engine"))
	}
	return msg
}

// firstFew lists the first namedStalled names and counts the rest.
func firstFew(names []string) string {
	if len(names) <= namedStalled {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:namedStalled], ", "), len(names)-namedStalled)
}
