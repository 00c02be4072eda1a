package sim

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		in      string
		want    Dist
		wantErr bool
	}{
		{"fixed:512", Dist{Kind: Fixed, A: 512}, false},
		{"uniform:100,2000", Dist{Kind: Uniform, A: 100, B: 2000}, false},
		{"lognormal:1000,0.8", Dist{Kind: LogNormal, A: 1000, B: 0.8}, false},
		{"exponential:250", Dist{Kind: Exponential, A: 250}, false},
		{"uniform:100", Dist{}, true},
		{"fixed:1,2", Dist{}, true},
		{"uniform:200,100", Dist{}, true},
		{"lognormal:0,1", Dist{}, true},
		{"normal:5,1", Dist{}, true},
		{"fixed:x", Dist{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDist(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidConfig)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.in, got.String())
		})
	}
}

func TestDistMeans(t *testing.T) {
	tests := []struct {
		d        Dist
		wantMean float64
	}{
		{Dist{Kind: Fixed, A: 512}, 512},
		{Dist{Kind: Uniform, A: 100, B: 300}, 200},
		{Dist{Kind: LogNormal, A: 1000, B: 0.8}, 1000},
		{Dist{Kind: Exponential, A: 250}, 250},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			sum := 0
			const n = 200000
			for range n {
				sum += tt.d.sample(r)
			}
			require.InEpsilon(t, tt.wantMean, float64(sum)/n, 0.02)
		})
	}
}

func TestProfiles(t *testing.T) {
	tests := []struct {
		in   string
		at   time.Duration
		want float64
		peak float64
	}{
		{"steady", time.Hour, 1, 1},
		{"ramp:from=0.5,to=2,over=10m", 0, 0.5, 2},
		{"ramp:from=0.5,to=2,over=10m", 5 * time.Minute, 1.25, 2},
		{"ramp:from=0.5,to=2,over=10m", time.Hour, 2, 2},
		{"bursts:period=10m,length=1m,factor=4", 30 * time.Second, 4, 4},
		{"bursts:period=10m,length=1m,factor=4", 5 * time.Minute, 1, 4},
		{"bursts:period=10m,length=1m,factor=4", 20*time.Minute + time.Second, 4, 4},
		{"step:at=5m,factor=3", 4 * time.Minute, 1, 3},
		{"step:at=5m,factor=3", 5 * time.Minute, 3, 3},
		{"step:at=5m,factor=0.5", 6 * time.Minute, 0.5, 1},
		{"sine:period=1h,amplitude=0.5", 15 * time.Minute, 1.5, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.in+"@"+tt.at.String(), func(t *testing.T) {
			p, err := ParseProfile(tt.in)
			require.NoError(t, err)
			require.InDelta(t, tt.want, p.factor(tt.at), 1e-9)
			require.Equal(t, tt.peak, p.peak())
			require.Equal(t, tt.in, p.String())
		})
	}
}

func TestProfileErrors(t *testing.T) {
	for _, in := range []string{"", "flat", "ramp:from=1", "bursts:period=1m,length=2m,factor=2",
		"step:at=5m,factor=-1", "sine:period=1h,amplitude=2", "steady:x=1", "ramp:from=a,to=1,over=1m"} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseProfile(in)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestProfileArrivalRate(t *testing.T) {
	f := newTestFleet(t, func(c *Config) {
		c.Rate, c.Skew = 2, 0
		c.Profile = Profile{Kind: Step, At: 30 * time.Minute, Factor: 3}
	}, InstanceConfig{Model: "m"})
	require.NoError(t, f.Advance(30*time.Minute))
	before := f.Snapshot().Engines[0].Arrivals
	require.NoError(t, f.Advance(30*time.Minute))
	after := f.Snapshot().Engines[0].Arrivals - before
	require.InEpsilon(t, 3600.0, float64(before), 0.05)
	require.InEpsilon(t, 3*3600.0, float64(after), 0.05)
}

func TestConfigValidation(t *testing.T) {
	one := []InstanceConfig{{Model: "m"}}
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"no instances", func(c *Config) { c.Instances = nil }},
		{"empty model", func(c *Config) { c.Instances = []InstanceConfig{{}} }},
		{"v0 data parallel", func(c *Config) { c.Instances = []InstanceConfig{{Model: "m", Engines: 2, Generation: V0}} }},
		{"unknown generation", func(c *Config) { c.Instances = []InstanceConfig{{Model: "m", Generation: "v2"}} }},
		{"negative rate", func(c *Config) { c.Rate = -1 }},
		{"zero blocks", func(c *Config) { c.Engine.NumGPUBlocks = 0 }},
		{"zero step time", func(c *Config) { c.Engine.StepBase, c.Engine.StepPerSeq = 0, 0 }},
		{"hit rate above 1", func(c *Config) { c.Engine.PrefixHitRate = 1.5 }},
		{"bad distribution", func(c *Config) { c.Engine.OutputTokens = Dist{Kind: "normal", A: 1} }},
		{"bad profile", func(c *Config) { c.Profile = Profile{Kind: Bursts} }},
		{"ports overflow", func(c *Config) { c.BasePort = 65536 }},
		{"bad instance engine", func(c *Config) {
			p := DefaultEngineParams()
			p.BlockSize = 0
			c.Instances = []InstanceConfig{{Model: "m", Engine: &p}}
		}},
		{"error rate above 1", func(c *Config) { c.Engine.ErrorRate = 1.1 }},
		{"negative spec tokens", func(c *Config) { c.Engine.SpecTokens = -1 }},
		{"too many spec tokens", func(c *Config) { c.Engine.SpecTokens = 17 }},
		{"spec acceptance above 1", func(c *Config) { c.Engine.SpecTokens, c.Engine.SpecAcceptance = 2, 1.5 }},
		{"lora without slots", func(c *Config) { c.Engine.LoRAAdapters, c.Engine.MaxLoRAs = 3, 0 }},
		{"negative lora adapters", func(c *Config) { c.Engine.LoRAAdapters = -2 }},
		{"negative transfer time", func(c *Config) { c.Engine.KVTransferPerToken = -time.Microsecond }},
		{"transfer fail rate above 1", func(c *Config) { c.Engine.KVTransferFailRate = 2 }},
		{"unknown load failure policy", func(c *Config) { c.Engine.KVLoadFailurePolicy = "retry" }},
		{"unknown role", func(c *Config) { c.Instances = []InstanceConfig{{Model: "m", Role: "encode"}} }},
		{"role on v0", func(c *Config) { c.Instances = []InstanceConfig{{Model: "m", Generation: V0, Role: RoleDecode}} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Instances = one
			tt.mutate(&cfg)
			_, err := NewFleet(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestParseConfig(t *testing.T) {
	base := DefaultConfig()
	base.Instances = []InstanceConfig{{Model: "from-flags"}}
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, c Config)
	}{
		{"empty keeps base", `{}`, func(t *testing.T, c Config) { require.Equal(t, base, c) }},
		{"fleet keys", `{"seed": 9, "rate": 2.5, "tick": "20ms", "profile": "step:at=5m,factor=3", "base_port": 9000}`,
			func(t *testing.T, c Config) {
				require.Equal(t, uint64(9), c.Seed)
				require.Equal(t, 2.5, c.Rate)
				require.Equal(t, 20*time.Millisecond, c.Tick)
				require.Equal(t, Profile{Kind: Step, At: 5 * time.Minute, Factor: 3}, c.Profile)
				require.Equal(t, 9000, c.BasePort)
				require.Equal(t, base.Instances, c.Instances)
			}},
		{"engine overlay", `{"engine": {"num_gpu_blocks": 64, "step_base": "20ms", "prompt_tokens": "fixed:100"}}`,
			func(t *testing.T, c Config) {
				require.Equal(t, 64, c.Engine.NumGPUBlocks)
				require.Equal(t, 20*time.Millisecond, c.Engine.StepBase)
				require.Equal(t, Dist{Kind: Fixed, A: 100}, c.Engine.PromptTokens)
				require.Equal(t, base.Engine.MaxNumSeqs, c.Engine.MaxNumSeqs, "unmentioned keys stay")
				require.Equal(t, base.Engine.StepPerSeq, c.Engine.StepPerSeq)
			}},
		{"instances replace and overlay the fleet engine",
			`{"engine": {"max_num_seqs": 32}, "instances": [
				{"model": "a", "engines": 2},
				{"model": "b", "generation": "v0", "rate_factor": 3, "engine": {"num_gpu_blocks": 40}}]}`,
			func(t *testing.T, c Config) {
				require.Len(t, c.Instances, 2)
				require.Equal(t, InstanceConfig{Model: "a", Engines: 2}, c.Instances[0])
				b := c.Instances[1]
				require.Equal(t, V0, b.Generation)
				require.Equal(t, 3.0, b.RateFactor)
				require.Equal(t, 40, b.Engine.NumGPUBlocks)
				require.Equal(t, 32, b.Engine.MaxNumSeqs, "instance engine starts from the fleet engine")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.json), base)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestParseConfigFeatures(t *testing.T) {
	c, err := ParseConfig([]byte(`{"engine": {"num_speculative_tokens": 3, "spec_acceptance": 0.6, "error_rate": 0.01,
		"lora_adapters": 8, "max_loras": 2, "kv_transfer_base": "9ms", "kv_transfer_per_token": "15us",
		"kv_load_failure_policy": "recompute"},
		"instances": [{"model": "p", "role": "prefill"}, {"model": "d", "role": "decode", "engine": {"kv_transfer_fail_rate": 0.1}}]}`),
		DefaultConfig())
	require.NoError(t, err)
	p := c.Engine
	require.Equal(t, 3, p.SpecTokens)
	require.Equal(t, 0.6, p.SpecAcceptance)
	require.Equal(t, 0.01, p.ErrorRate)
	require.Equal(t, 8, p.LoRAAdapters)
	require.Equal(t, 2, p.MaxLoRAs)
	require.Equal(t, 9*time.Millisecond, p.KVTransferBase)
	require.Equal(t, 15*time.Microsecond, p.KVTransferPerToken)
	require.Equal(t, KVLoadRecompute, p.KVLoadFailurePolicy)
	require.Equal(t, []string{RolePrefill, RoleDecode}, []string{c.Instances[0].Role, c.Instances[1].Role})
	require.Nil(t, c.Instances[0].Engine)
	require.Equal(t, 0.1, c.Instances[1].Engine.KVTransferFailRate)
	require.Equal(t, 3, c.Instances[1].Engine.SpecTokens, "an instance engine overlays the fleet engine")
	f, err := NewFleet(c)
	require.NoError(t, err)
	require.Equal(t, []string{RolePrefill, RoleDecode}, []string{f.Endpoints()[0].Role, f.Endpoints()[1].Role})
}

func TestParseConfigErrors(t *testing.T) {
	for _, in := range []string{`{"sead": 1}`, `{"engine": {"blocks": 1}}`, `{"tick": 50}`,
		`{"profile": "wobble"}`, `{"instances": [{"model": "a", "generation": "v9"}]}`,
		`{"instances": [{"model": "a", "engine": {"step_base": "soon"}}]}`, `[`} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseConfig([]byte(in), DefaultConfig())
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"instances": [{"model": "x"}]}`), 0o600))
	c, err := LoadConfigFile(path, DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, "x", c.Instances[0].Model)
	_, err = LoadConfigFile(filepath.Join(t.TempDir(), "missing.json"), DefaultConfig())
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestBuckets125(t *testing.T) {
	tests := []struct {
		max  int
		want []float64
	}{
		{1, []float64{1}},
		{8192, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}},
		{10000, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}},
		{131072, []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, buckets125(tt.max), "max %d", tt.max)
	}
}

func TestPyFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {8, "8.0"}, {0.27, "0.27"}, {-1, "-1.0"}, {412160, "412160.0"},
		{1747600000, "1.7476e+09"}, {2147483648, "2.147483648e+09"}, {1e10, "1e+010"},
		{1747650145.7368872, "1.7476501457368872e+09"}, {1234567.5, "1.2345675e+06"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e-7, "1.5e-07"},
		{math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, pyFloat(tt.in), "%v", tt.in)
	}
}

func TestDequeRemoveAt(t *testing.T) {
	tests := []struct {
		name string
		at   int
		want []int
	}{
		{"front", 0, []int{13, 14, 15, 16, 17, 18}},
		{"across the wrap", 3, []int{12, 13, 14, 16, 17, 18}},
		{"back", 6, []int{12, 13, 14, 15, 16, 17}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d deque[int]
			for i := range 16 {
				d.pushBack(i)
			}
			for range 12 {
				d.popFront()
			}
			for i := 16; i < 19; i++ { // wraps to the start of the buffer
				d.pushBack(i)
			}
			require.Equal(t, 12+tt.at, d.removeAt(tt.at))
			got := []int{}
			for i := range d.len() {
				got = append(got, d.at(i))
			}
			require.Equal(t, tt.want, got)
			d.pushBack(99)
			require.Equal(t, 99, d.at(d.len()-1))
		})
	}
}

func TestDequeAndRing(t *testing.T) {
	var d deque[int]
	for i := range 40 {
		d.pushBack(i)
	}
	d.pushFront(-1)
	d.pushFront(-2)
	require.Equal(t, 42, d.len())
	require.Equal(t, -2, d.popFront())
	require.Equal(t, -1, d.popFront())
	for i := range 40 {
		require.Equal(t, i, d.popFront())
	}
	r := newRing[int](3)
	for i := range 5 {
		r.push(i)
	}
	require.Equal(t, []int{2, 3, 4}, r.appendTo(nil))
	off := newRing[int](0)
	off.push(1)
	require.Empty(t, off.appendTo(nil))
}
