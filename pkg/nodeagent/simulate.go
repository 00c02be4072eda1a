package nodeagent

import (
	"context"
	"crypto/sha1" // #nosec G505 -- only to derive stable fake UUIDs
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/inferops/vllm-datasource/pkg/agentapi"
)

// Simulated GPUs are H100 SXM 80GB-like.
const (
	SimGPUName        = "NVIDIA H100 80GB HBM3"
	simMemoryTotal    = 81559 << 20 // bytes, as NVML reports an H100 80GB
	simPowerLimit     = 700.0       // W
	simIdlePower      = 70.0        // W
	simIdleTemp       = 30.0        // °C
	simWeightsShare   = 0.20        // of memory, held by model weights
	simKVShare        = 0.70        // of memory, the KV-cache pool
	simIdleMemory     = 512 << 20   // bytes in use on an unused GPU
	simBasePID        = 10000
	simDefaultModel   = "meta-llama/Llama-3.1-8B-Instruct"
	simPeriod         = 5 * time.Minute // of the unfollowed load pattern
	simFollowTimeout  = time.Second
	maxSimulatedGPUs  = 1024
	simSaturationReqs = 8.0 // running requests at which utilisation is ~63%
)

// SimConfig configures simulated GPUs.
type SimConfig struct {
	// GPUs is how many devices to simulate (1–1024).
	GPUs int
	// Node seeds the stable fake UUIDs.
	Node string
	// Host is the instance host of the unfollowed servers (host:8000+i).
	Host string
	// Follow lists vllm-sim /metrics URLs. When set, GPU i follows the
	// i-th engine found across them, in order (engines of one URL by their
	// engine label), and reports that URL's host:port as its instance.
	Follow []string
	// Client fetches the Follow URLs; nil uses a client with a 1 s timeout.
	Client *http.Client
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
}

// Simulated is a Source of fake GPUs for demos and tests.
type Simulated struct {
	cfg      SimConfig
	follower *follower
}

// NewSimulated checks cfg and builds the source.
func NewSimulated(cfg SimConfig) (*Simulated, error) {
	if cfg.GPUs < 1 || cfg.GPUs > maxSimulatedGPUs {
		return nil, fmt.Errorf("simulate: %d GPUs: %w", cfg.GPUs, errors.New("want 1 to 1024"))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: simFollowTimeout}
	}
	s := &Simulated{cfg: cfg}
	if len(cfg.Follow) > 0 {
		f, err := newFollower(cfg.Follow, cfg.Client)
		if err != nil {
			return nil, err
		}
		s.follower = f
	}
	return s, nil
}

// load is what drives one simulated GPU.
type load struct {
	running, kv     float64
	instance, model string
	err             string
}

// GPUs implements Source.
func (s *Simulated) GPUs(ctx context.Context) ([]agentapi.GPU, error) {
	loads := s.loads(ctx)
	gpus := make([]agentapi.GPU, s.cfg.GPUs)
	for i := range gpus {
		gpus[i] = s.gpu(i, loads[i])
	}
	return gpus, nil
}

func (s *Simulated) loads(ctx context.Context) []load {
	if s.follower != nil {
		return s.follower.loads(ctx, s.cfg.GPUs)
	}
	t := float64(s.cfg.Now().UnixNano()) / float64(simPeriod)
	loads := make([]load, s.cfg.GPUs)
	for i := range loads {
		phase := 2*math.Pi*t + 0.7*float64(i)
		loads[i] = load{
			running:  math.Round(12 + 10*math.Sin(phase)),
			kv:       0.35 + 0.25*math.Sin(phase-0.5),
			instance: net.JoinHostPort(s.cfg.Host, strconv.Itoa(DefaultVLLMPort+i)),
			model:    simDefaultModel,
		}
	}
	return loads
}

// gpu turns a load into H100-like readings.
func (s *Simulated) gpu(i int, l load) agentapi.GPU {
	util := 0.0
	if l.running > 0 {
		util = math.Round(100 * (1 - math.Exp(-l.running/simSaturationReqs)))
	}
	used := float64(simIdleMemory)
	if l.instance != "" {
		used = mib(simMemoryTotal * (simWeightsShare + simKVShare*clamp01(l.kv)))
	}
	g := agentapi.GPU{
		Index:            i,
		UUID:             simUUID(s.cfg.Node, i),
		Name:             SimGPUName,
		MemoryUsedBytes:  agentapi.Float(used),
		MemoryTotalBytes: agentapi.Float(simMemoryTotal),
		GPUUtilPercent:   agentapi.Float(util),
		MemUtilPercent:   agentapi.Float(math.Round(0.6 * util)),
		TemperatureC:     agentapi.Float(math.Round(simIdleTemp + 45*util/100)),
		PowerWatts:       agentapi.Float(math.Round(simIdlePower + (simPowerLimit-simIdlePower)*0.9*util/100)),
		PowerLimitWatts:  agentapi.Float(simPowerLimit),
		Processes:        []agentapi.Process{},
		Error:            l.err,
	}
	if l.instance != "" {
		g.Processes = append(g.Processes, agentapi.Process{PID: simBasePID + i, UsedMemoryBytes: agentapi.Float(used - simIdleMemory), VLLMInstance: l.instance, Model: l.model})
		g.VLLMInstance, g.Model = l.instance, l.model
	}
	return g
}

// mib rounds bytes down to whole MiB, as NVML reports them.
func mib(b float64) float64 { return math.Floor(b/(1<<20)) * (1 << 20) }

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// simUUID derives a stable GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx UUID.
func simUUID(node string, i int) string {
	h := sha1.Sum([]byte(node + "/" + strconv.Itoa(i))) // #nosec G401 -- not security relevant
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}
