// Command otelcolhost is a test-only OpenTelemetry Collector built from the
// Collector's own modules: the Prometheus receiver of
// opentelemetry-collector-contrib (which scrapes like Prometheus and turns
// the target's labels into resource attributes) and the OTLP/HTTP exporter,
// nothing else. The integration tests send a simulated vLLM fleet through
// it into Prometheus 3's OTLP receiver, the pipeline OpenTelemetry-first
// platforms run. It is its own Go module so that the plugin's go.mod never
// takes the Collector's dependencies; scripts/backends.sh builds it once.
package main

import (
	"fmt"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbyattrsprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func main() {
	info := component.BuildInfo{Command: "otelcolhost", Description: "test Collector: prometheus receiver, groupbyattrs and resource processors, otlphttp exporter", Version: "v0.165.0"}
	set := otelcol.CollectorSettings{
		BuildInfo: info,
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
				DefaultScheme:     "env",
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "otelcolhost:", err)
		os.Exit(1)
	}
}

// factories are the components the tests' pipelines need: the receiver and
// the exporter, and two processors that move a target's namespace and pod
// from the data points to the resource under OpenTelemetry's Kubernetes
// names (k8s.namespace.name, k8s.pod.name), the shape kubernetes_sd and the
// k8sattributes processor give on a cluster, which a test has not got.
func factories() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](prometheusreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	processors, err := otelcol.MakeFactoryMap[processor.Factory](groupbyattrsprocessor.NewFactory(), resourceprocessor.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](otlphttpexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: receivers, Processors: processors, Exporters: exporters,
		Telemetry: otelconftelemetry.NewFactory()}, nil
}
