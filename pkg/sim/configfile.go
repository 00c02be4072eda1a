package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// fileConfig is the JSON config file. Pointer fields tell "absent" from
// zero, so a file overrides only what it mentions.
type fileConfig struct {
	Seed          *uint64         `json:"seed"`
	Listen        *string         `json:"listen"`
	BasePort      *int            `json:"base_port"`
	Speed         *float64        `json:"speed"`
	Tick          *jsonDuration   `json:"tick"`
	Rate          *float64        `json:"rate"`
	Profile       *Profile        `json:"profile"`
	Skew          *float64        `json:"skew"`
	Engine        json.RawMessage `json:"engine"`
	Instances     []fileInstance  `json:"instances"`
	PreemptionLog *int            `json:"preemption_log"`
	RequestLog    *int            `json:"request_log"`
	// HistogramBuckets, when present, replaces base's map as a whole.
	HistogramBuckets map[string][]float64 `json:"histogram_buckets"`
}

type fileInstance struct {
	Model      string          `json:"model"`
	Engines    int             `json:"engines"`
	Generation Generation      `json:"generation"`
	Port       int             `json:"port"`
	RateFactor float64         `json:"rate_factor"`
	Engine     json.RawMessage `json:"engine"`
	Role       string          `json:"role"`
	Release    string          `json:"release"`
}

// LoadConfigFile reads a JSON config file and overlays it on base (see
// ParseConfig).
func LoadConfigFile(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("sim: reading config: %w", err)
	}
	c, err := ParseConfig(data, base)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig overlays a JSON config on base: each key present replaces
// base's value; "engine" overlays base.Engine key by key; "instances", when
// present, replaces base.Instances, and each instance's "engine" overlays
// the resulting fleet engine. Keys are the snake_case names shown in
// docs/simulator.md; durations are Go duration strings ("50ms"); profile and
// token distributions use their text forms. Unknown keys are errors.
func ParseConfig(data []byte, base Config) (Config, error) {
	var fc fileConfig
	if err := strictUnmarshal(data, &fc); err != nil {
		return Config{}, err
	}
	c := base
	set(&c.Seed, fc.Seed)
	set(&c.Listen, fc.Listen)
	set(&c.BasePort, fc.BasePort)
	set(&c.Speed, fc.Speed)
	set(&c.Rate, fc.Rate)
	set(&c.Profile, fc.Profile)
	set(&c.Skew, fc.Skew)
	set(&c.PreemptionLog, fc.PreemptionLog)
	set(&c.RequestLog, fc.RequestLog)
	if fc.HistogramBuckets != nil {
		c.HistogramBuckets = fc.HistogramBuckets
	}
	if fc.Tick != nil {
		c.Tick = time.Duration(*fc.Tick)
	}
	if len(fc.Engine) > 0 {
		if err := json.Unmarshal(fc.Engine, &c.Engine); err != nil {
			return Config{}, fmt.Errorf("%w: engine: %w", ErrInvalidConfig, err)
		}
	}
	if fc.Instances == nil {
		return c, nil
	}
	c.Instances = nil
	for i, fi := range fc.Instances {
		ic, err := fi.instance(c.Engine)
		if err != nil {
			return Config{}, fmt.Errorf("%w: instances[%d]: %w", ErrInvalidConfig, i, err)
		}
		c.Instances = append(c.Instances, ic)
	}
	return c, nil
}

func (fi fileInstance) instance(def EngineParams) (InstanceConfig, error) {
	ic := InstanceConfig{Model: fi.Model, Engines: fi.Engines, Generation: fi.Generation, Port: fi.Port,
		RateFactor: fi.RateFactor, Role: fi.Role, Release: fi.Release}
	if len(fi.Engine) > 0 {
		p := def
		if err := json.Unmarshal(fi.Engine, &p); err != nil {
			return InstanceConfig{}, fmt.Errorf("engine: %w", err)
		}
		ic.Engine = &p
	}
	return ic, nil
}

// UnmarshalJSON overlays a JSON object on p: keys present replace p's
// values, others are kept. Step times are duration strings.
func (p *EngineParams) UnmarshalJSON(b []byte) error {
	type plain EngineParams // no methods: avoids recursing into this one
	aux := struct {
		*plain
		StepBase            *jsonDuration `json:"step_base"`
		StepPerSeq          *jsonDuration `json:"step_per_seq"`
		StepPerPrefillToken *jsonDuration `json:"step_per_prefill_token"`
		WedgeAfter          *jsonDuration `json:"wedge_after"`
		KVTransferBase      *jsonDuration `json:"kv_transfer_base"`
		KVTransferPerToken  *jsonDuration `json:"kv_transfer_per_token"`
	}{plain: (*plain)(p)}
	if err := strictUnmarshal(b, &aux); err != nil {
		return err
	}
	for _, d := range []struct {
		dst *time.Duration
		src *jsonDuration
	}{{&p.StepBase, aux.StepBase}, {&p.StepPerSeq, aux.StepPerSeq}, {&p.StepPerPrefillToken, aux.StepPerPrefillToken},
		{&p.WedgeAfter, aux.WedgeAfter}, {&p.KVTransferBase, aux.KVTransferBase},
		{&p.KVTransferPerToken, aux.KVTransferPerToken}} {
		if d.src != nil {
			*d.dst = time.Duration(*d.src)
		}
	}
	return nil
}

// jsonDuration is a duration written as a Go duration string ("12ms").
type jsonDuration time.Duration

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"12ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = jsonDuration(v)
	return nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}
