package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// targetGroup is one entry of a Prometheus file_sd file.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// RoleTargetLabel is the target label the targets file gives an instance
// with a role, as KServe's PodMonitor does from the pod label llm-d.ai/role.
const RoleTargetLabel = "llm_isvc_role"

// TargetsJSON renders the endpoints as a Prometheus file_sd target list:
// one group holding every address without a role, with no labels, so
// series carry only what real vLLM exposes plus Prometheus's own job and
// instance; then one group per role (prefill, then decode) with the
// target label llm_isvc_role.
func TargetsJSON(eps []Endpoint) ([]byte, error) {
	plain := targetGroup{Targets: []string{}}
	var byRole []targetGroup
	for _, ep := range eps {
		if ep.Addr == "" {
			return nil, fmt.Errorf("sim: instance %d has no address; call Start first", ep.Instance)
		}
		if ep.Role == "" {
			plain.Targets = append(plain.Targets, ep.Addr)
			continue
		}
		byRole = addToRoleGroup(byRole, ep)
	}
	groups := []targetGroup{plain}
	if len(plain.Targets) == 0 && len(byRole) > 0 {
		groups = nil
	}
	slices.SortStableFunc(byRole, func(a, b targetGroup) int {
		return strings.Compare(roleOrder(a.Labels[RoleTargetLabel]), roleOrder(b.Labels[RoleTargetLabel]))
	})
	b, err := json.MarshalIndent(append(groups, byRole...), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sim: encoding targets: %w", err)
	}
	return append(b, '\n'), nil
}

// addToRoleGroup puts ep's address in the group of its role.
func addToRoleGroup(groups []targetGroup, ep Endpoint) []targetGroup {
	for i := range groups {
		if groups[i].Labels[RoleTargetLabel] == ep.Role {
			groups[i].Targets = append(groups[i].Targets, ep.Addr)
			return groups
		}
	}
	return append(groups, targetGroup{Targets: []string{ep.Addr}, Labels: map[string]string{RoleTargetLabel: ep.Role}})
}

// roleOrder sorts prefill before decode.
func roleOrder(role string) string {
	if role == RolePrefill {
		return "0"
	}
	return "1" + role
}

// WriteTargetsFile writes TargetsJSON to path. It writes a temporary file
// and renames it, because Prometheus re-reads the file as soon as it
// changes and must never see it half-written.
func WriteTargetsFile(path string, eps []Endpoint) error {
	b, err := TargetsJSON(eps)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".targets-*.json")
	if err != nil {
		return fmt.Errorf("sim: writing targets file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sim: writing targets file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sim: writing targets file: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("sim: writing targets file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("sim: writing targets file: %w", err)
	}
	return nil
}
