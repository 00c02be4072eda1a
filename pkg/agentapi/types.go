package agentapi

// GPUsPath is the agent's JSON endpoint.
const GPUsPath = "/v1/gpus"

// DefaultPort is the port the agent listens on unless told otherwise.
const DefaultPort = 9400

// Report is the body of GET /v1/gpus: every GPU of one node.
type Report struct {
	// Node names the machine (its hostname unless the agent is told otherwise).
	Node string `json:"node"`
	// GPUs are ordered by index.
	GPUs []GPU `json:"gpus"`
}

// GPU is one device. Numeric readings are nil (JSON null) when the driver
// cannot give them: unsupported on this device, or an error, in which case
// Error says which reading failed and why.
type GPU struct {
	Index            int       `json:"index"`
	UUID             string    `json:"uuid"`
	Name             string    `json:"name"`
	MemoryUsedBytes  *float64  `json:"memoryUsedBytes"`
	MemoryTotalBytes *float64  `json:"memoryTotalBytes"`
	GPUUtilPercent   *float64  `json:"gpuUtilPercent"`
	MemUtilPercent   *float64  `json:"memUtilPercent"`
	TemperatureC     *float64  `json:"temperatureC"`
	PowerWatts       *float64  `json:"powerWatts"`
	PowerLimitWatts  *float64  `json:"powerLimitWatts"`
	Processes        []Process `json:"processes"`
	// VLLMInstance is the Prometheus instance (host:port) of the vLLM server
	// that owns this GPU: the one whose processes use the most memory on it.
	VLLMInstance string `json:"vllmInstance"`
	// Model is that server's served model name.
	Model string `json:"model"`
	// Namespace, Pod and Container are the Kubernetes container the
	// kubelet allocated this GPU to (pod-resources API); empty on bare
	// metal and for unallocated GPUs.
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Container string `json:"container,omitempty"`
	// Error is empty for a healthy device; otherwise it lists the readings
	// that failed. The other fields still carry what could be read.
	Error string `json:"error,omitempty"`
}

// Process is one compute process on a GPU and the vLLM server it belongs to
// (empty when it is not part of a vLLM server or cannot be mapped).
type Process struct {
	PID             int      `json:"pid"`
	UsedMemoryBytes *float64 `json:"usedMemoryBytes"`
	VLLMInstance    string   `json:"vllmInstance"`
	Model           string   `json:"model"`
}

// Float returns a pointer to v, for filling the optional readings.
func Float(v float64) *float64 { return &v }
