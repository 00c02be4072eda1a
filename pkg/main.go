// Command gpx_vllm is the backend of the vLLM data source for Grafana.
package main

import (
	"context"
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/inferops/vllm-datasource/pkg/memlimit"
	"github.com/inferops/vllm-datasource/pkg/plugin"
)

func main() {
	// The soft memory limit first, so the process's whole life runs under
	// it (pkg/memlimit: the cache budget of a few instances plus the
	// process's own; GOMEMLIMIT overrides).
	limit, from := memlimit.Apply(os.Getenv, 0)
	log.DefaultLogger.Debug("memory limit", "bytes", limit, "from", string(from))
	// And the crowd's pages back to the system once it has gone, rather
	// than up to two minutes later (pkg/memlimit, trim.go).
	go memlimit.TrimWhenIdle(context.Background(), memlimit.TrimPeriod, func() {
		log.DefaultLogger.Debug("returned idle memory to the system")
	})
	if err := datasource.Manage(plugin.ID, plugin.NewDatasource, datasource.ManageOpts{}); err != nil {
		log.DefaultLogger.Error("plugin exited", "error", err.Error())
		os.Exit(1)
	}
}
