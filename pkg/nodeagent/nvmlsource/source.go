//go:build cgo

package nvmlsource

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// LibraryName is the NVML library go-nvml loads at run time.
const LibraryName = "libnvidia-ml.so.1"

// valueNotAvailable is NVML's "unknown" for per-process memory.
const valueNotAvailable = ^uint64(0)

// Source reads every GPU of the node through an NVML interface: the real
// library (nvml.New()) or a mock in tests.
type Source struct {
	lib nvml.Interface
}

// Open initialises NVML. Without the driver it fails with an error that
// wraps nvml.ERROR_LIBRARY_NOT_FOUND and names the missing library.
func Open(lib nvml.Interface) (*Source, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if errors.Is(ret, nvml.ERROR_LIBRARY_NOT_FOUND) {
			return nil, fmt.Errorf("NVML init: %w: %s not found (is the NVIDIA driver installed and the library on the loader path? use --simulate N to run without a GPU)", ret, LibraryName)
		}
		return nil, fmt.Errorf("NVML init: %w", ret)
	}
	return &Source{lib: lib}, nil
}

// Close shuts NVML down.
func (s *Source) Close() error {
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %w", ret)
	}
	return nil
}

// GPUs implements nodeagent.Source. Only a failure to count the devices
// fails the call; a device that cannot be read is reported with Error set.
func (s *Source) GPUs(ctx context.Context) ([]agentapi.GPU, error) {
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML device count: %w", ret)
	}
	gpus := make([]agentapi.GPU, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading GPU %d: %w", i, err)
		}
		gpus = append(gpus, s.device(i))
	}
	return gpus, nil
}

// device reads one GPU. Each reading that fails is left nil and noted in
// Error; readings the device does not support are left nil silently.
func (s *Source) device(i int) agentapi.GPU {
	g := agentapi.GPU{Index: i, Processes: []agentapi.Process{}}
	dev, ret := s.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		g.Error = "handle: " + ret.Error()
		return g
	}
	r := &reader{}
	g.UUID = r.str("uuid", dev.GetUUID)
	g.Name = r.str("name", dev.GetName)
	readMemory(r, dev, &g)
	readUtilization(r, dev, &g)
	g.TemperatureC = r.u32("temperature", func() (uint32, nvml.Return) { return dev.GetTemperature(nvml.TEMPERATURE_GPU) }, 1)
	g.PowerWatts = r.u32("power", dev.GetPowerUsage, 1000)
	g.PowerLimitWatts = r.u32("power limit", dev.GetEnforcedPowerLimit, 1000)
	g.Processes = readProcesses(r, dev)
	g.Error = strings.Join(r.errs, "; ")
	return g
}

func readMemory(r *reader, dev nvml.Device, g *agentapi.GPU) {
	mem, ret := dev.GetMemoryInfo()
	if r.ok("memory", ret) {
		g.MemoryUsedBytes, g.MemoryTotalBytes = agentapi.Float(float64(mem.Used)), agentapi.Float(float64(mem.Total))
	}
}

func readUtilization(r *reader, dev nvml.Device, g *agentapi.GPU) {
	u, ret := dev.GetUtilizationRates()
	if r.ok("utilization", ret) {
		g.GPUUtilPercent, g.MemUtilPercent = agentapi.Float(float64(u.Gpu)), agentapi.Float(float64(u.Memory))
	}
}

func readProcesses(r *reader, dev nvml.Device) []agentapi.Process {
	infos, ret := dev.GetComputeRunningProcesses()
	out := []agentapi.Process{}
	if !r.ok("processes", ret) {
		return out
	}
	for _, p := range infos {
		proc := agentapi.Process{PID: int(p.Pid)}
		if p.UsedGpuMemory != valueNotAvailable {
			proc.UsedMemoryBytes = agentapi.Float(float64(p.UsedGpuMemory))
		}
		out = append(out, proc)
	}
	return out
}

// reader collects the errors of one device's readings.
type reader struct {
	errs []string
}

// ok reports success; ERROR_NOT_SUPPORTED is not an error, only "no value".
func (r *reader) ok(what string, ret nvml.Return) bool {
	switch ret {
	case nvml.SUCCESS:
		return true
	case nvml.ERROR_NOT_SUPPORTED:
		return false
	default:
		r.errs = append(r.errs, what+": "+ret.Error())
		return false
	}
}

func (r *reader) str(what string, get func() (string, nvml.Return)) string {
	v, ret := get()
	if !r.ok(what, ret) {
		return ""
	}
	return v
}

// u32 reads an integer reading and divides it by div (milliwatts to watts).
func (r *reader) u32(what string, get func() (uint32, nvml.Return), div float64) *float64 {
	v, ret := get()
	if !r.ok(what, ret) {
		return nil
	}
	return agentapi.Float(float64(v) / div)
}
