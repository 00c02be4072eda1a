package vllm

import (
	"strings"
)

// The cAdvisor probe: which of the cAdvisor families the fleet table's
// and saturation's container expressions read exist in the store, asked
// once per detection refresh. Those expressions join every selected
// engine to cAdvisor's rows before finding nothing, so a fleet without
// cAdvisor paid 0.6–0.75 s of Prometheus' evaluation at 10,000 engines
// for two empty columns (docs/performance.md); with the probe it pays a
// series-index lookup of two names every few minutes.

// cadvisorThrottledPeriods is cAdvisor's count of CFS periods in which a
// container was throttled (the throttling columns' numerator).
const cadvisorThrottledPeriods = "container_cpu_cfs_throttled_periods_total"

// containerFamily is, for the container signals the fleet table and
// saturation read, the cAdvisor family without which the signal has no
// series whatever else the store holds: throttling divides throttled
// periods by periods; memory of limit divides the working set by
// cAdvisor's or kube-state-metrics' limit (both joins read the working
// set).
var containerFamily = map[string]string{
	ContainerCPUThrottled:  cadvisorThrottledPeriods,
	ContainerMemoryOfLimit: cadvisorWorkingSet,
}

// ContainerFamilies is what the cAdvisor probe found. The zero value is
// "not probed": every container expression is asked for, as before the
// probe (a store that cannot answer the probe still gets its columns).
type ContainerFamilies struct {
	// Probed is true once the probe answered.
	Probed bool
	// Names are the probed cAdvisor names that have series in scope.
	Names map[string]bool
}

// ContainerNamesSelector is the probe's match[] selector: the cAdvisor
// families of containerFamily inside the data source's scope (the same
// scope the container expressions put on cAdvisor's rows).
func (b Builder) ContainerNamesSelector() string {
	ms := append([]string{"__name__=~" + quote(cadvisorThrottledPeriods+"|"+cadvisorWorkingSet)}, b.scope()...)
	return "{" + strings.Join(ms, ", ") + "}"
}

// WithContainerNames is the detection with the probe's answer: the names
// the store listed for ContainerNamesSelector (others are ignored, so a
// store that ignores match[] cannot turn columns on by mistake).
func (d Detection) WithContainerNames(names []string) Detection {
	found := map[string]bool{}
	for _, n := range names {
		if n == cadvisorThrottledPeriods || n == cadvisorWorkingSet {
			found[n] = true
		}
	}
	d.Containers = ContainerFamilies{Probed: true, Names: found}
	return d
}

// containerAnswers reports whether a container signal can have series:
// false only when the probe answered and the signal's cAdvisor family
// was not among the names, so its expression would be empty.
func (b Builder) containerAnswers(signal string) bool {
	c := b.Detected.Containers
	fam, ok := containerFamily[signal]
	return !c.Probed || !ok || c.Names[fam]
}
