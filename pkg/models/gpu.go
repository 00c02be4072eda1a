package models

// GPUOptions are the gpu type's options.
type GPUOptions struct {
	// Source is where GPUs are read: "agents" (default), "prometheus" (the
	// agents as scraped) or "dcgm" (NVIDIA dcgm-exporter as scraped).
	Source string `json:"source"`
	// Format is "table" (default) or "series".
	Format string `json:"format"`
}
