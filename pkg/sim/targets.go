package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// targetGroup is one entry of a Prometheus file_sd file.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// TargetsJSON renders the endpoints as a Prometheus file_sd target list:
// one group holding every address. It adds no labels, so series carry only
// what real vLLM exposes plus Prometheus's own job and instance.
func TargetsJSON(eps []Endpoint) ([]byte, error) {
	g := targetGroup{Targets: []string{}}
	for _, ep := range eps {
		if ep.Addr == "" {
			return nil, fmt.Errorf("sim: instance %d has no address; call Start first", ep.Instance)
		}
		g.Targets = append(g.Targets, ep.Addr)
	}
	b, err := json.MarshalIndent([]targetGroup{g}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sim: encoding targets: %w", err)
	}
	return append(b, '\n'), nil
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
