//go:build !cgo

package nvmlsource

import "errors"

// ErrNoCgo says this build cannot read real GPUs.
var ErrNoCgo = errors.New("built without cgo: NVML (libnvidia-ml.so.1) cannot be loaded; rebuild with CGO_ENABLED=1 or use --simulate N")
