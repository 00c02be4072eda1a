package failuretest

import (
	"context"

	"github.com/grafana/grafana-plugin-sdk-go/experimental/status"
)

// initSource prepares ctx for backend.WithErrorSource, as the SDK's
// handler middleware does before calling the plugin.
func initSource(ctx context.Context) context.Context { return status.InitSource(ctx) }
