#!/usr/bin/env bash
# Builds the metric back ends the integration tests run against, besides
# Debian's Prometheus 2.42 and VictoriaMetrics: Prometheus 3.x and Thanos,
# from the Go module proxy, and a host over cAdvisor's library (its own
# module, tools/cadvisorhost), into a cache folder reused between runs. A
# binary already in the cache is not rebuilt. Prints the path of each binary.
#
#   bash scripts/backends.sh              # all
#   bash scripts/backends.sh prometheus   # only Prometheus 3
#   bash scripts/backends.sh promtool     # only Prometheus 3's promtool
#   bash scripts/backends.sh thanos       # only Thanos
#   bash scripts/backends.sh cadvisorhost # only the cAdvisor host
#   bash scripts/backends.sh otelcol      # only the OpenTelemetry Collector
#
# The versions here are the ones pkg/internal/promtest looks for; change them
# together (promtest.Prometheus3Version, promtest.ThanosVersion).
set -euo pipefail

PROMETHEUS_MODULE=github.com/prometheus/prometheus
PROMETHEUS_MODULE_VERSION=v0.316.0 # Prometheus 3.16.0
PROMETHEUS_VERSION=3.16.0
THANOS_MODULE=github.com/thanos-io/thanos
THANOS_VERSION=${THANOS_VERSION:-0.42.4} # 0.42.5 needs Go >= 1.26.10

cache="${XDG_CACHE_HOME:-$HOME/.cache}/inferops-vllm/bin"
mkdir -p "$cache"

# module_dir MODULE@VERSION: the read-only module source from the module cache.
module_dir() {
	local json dir
	json=$(go mod download -json "$1")
	dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ]; then
		printf '%s\n' "$json" >&2
		echo "backends: cannot download $1" >&2
		return 1
	fi
	printf '%s\n' "$dir"
}

# build NAME OUT MODULE@VERSION PKG LDFLAGS [TAGS]: builds PKG inside a
# writable copy of the module, so its own go.mod (and replace directives)
# decide the dependencies, exactly as its release build does.
build() {
	local name=$1 out=$2 modver=$3 pkg=$4 ldflags=$5 tags=${6:-}
	if [ -x "$out" ]; then
		echo "$out"
		return 0
	fi
	local src work start
	start=$(date +%s)
	src=$(module_dir "$modver")
	work=$(mktemp -d)
	cp -r "$src/." "$work/"
	chmod -R u+w "$work"
	echo "backends: building $name from $modver (cold build, several minutes)" >&2
	# The module zip ships a go.work naming folders it leaves out: build the
	# module alone. The binary appears under its final name only when whole.
	if ! (cd "$work" && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -trimpath -tags "$tags" \
		-ldflags "-s -w $ldflags" -o "$out.tmp.$$" "$pkg"); then
		rm -rf "$work" "$out.tmp.$$"
		echo "backends: building $name failed" >&2
		return 1
	fi
	rm -rf "$work"
	mv "$out.tmp.$$" "$out"
	echo "backends: built $name in $(($(date +%s) - start))s" >&2
	echo "$out"
}

prometheus() {
	local v=github.com/prometheus/common/version
	# remove_all_sd keeps only the static, file and http service discovery
	# (plugins/minimum.go): the tests use file_sd.
	build "prometheus $PROMETHEUS_VERSION" "$cache/prometheus-$PROMETHEUS_VERSION" \
		"$PROMETHEUS_MODULE@$PROMETHEUS_MODULE_VERSION" ./cmd/prometheus \
		"-X $v.Version=$PROMETHEUS_VERSION -X $v.Revision=$PROMETHEUS_MODULE_VERSION -X $v.Branch=module-proxy" \
		remove_all_sd
}

# promtool of the same release: the compose stack's config uses fields Debian's
# promtool 2.42 does not know (storage.tsdb.retention), so it is checked with this one.
promtool() {
	local v=github.com/prometheus/common/version
	build "promtool $PROMETHEUS_VERSION" "$cache/promtool-$PROMETHEUS_VERSION" \
		"$PROMETHEUS_MODULE@$PROMETHEUS_MODULE_VERSION" ./cmd/promtool \
		"-X $v.Version=$PROMETHEUS_VERSION -X $v.Revision=$PROMETHEUS_MODULE_VERSION -X $v.Branch=module-proxy" \
		remove_all_sd
}

thanos() {
	local v=github.com/prometheus/common/version
	# Thanos' own release build (.promu.yml) uses these tags. slicelabels is
	# not optional: Thanos' Store API casts Prometheus' labels.Labels to its
	# protobuf labels in place, which holds only for the slice layout; with
	# Prometheus' default stringlabels layout the sidecar computes garbage
	# message sizes and panics in gRPC's buffer pool on the first call.
	build "thanos $THANOS_VERSION" "$cache/thanos-$THANOS_VERSION-slicelabels" \
		"$THANOS_MODULE@v$THANOS_VERSION" ./cmd/thanos \
		"-X $v.Version=$THANOS_VERSION -X $v.Revision=v$THANOS_VERSION -X $v.Branch=module-proxy" \
		"netgo slicelabels"
}

# build_tool DIR WHAT: builds tools/DIR, a module of its own, into the cache
# as DIR-<hash of its sources> (pkg/internal/promtest computes the same name),
# so a change to the sources builds a new one and the plugin's go.mod never
# takes the tool's dependencies. WHAT names it in the log.
build_tool() {
	local dir=$1 what=$2 src key out start
	src="$(cd "$(dirname "$0")/.." && pwd)/tools/$dir"
	key=$(cd "$src" && cat main.go go.mod go.sum | sha256sum | cut -c1-12)
	out="$cache/$dir-$key"
	if [ -x "$out" ]; then
		echo "$out"
		return 0
	fi
	start=$(date +%s)
	echo "backends: building $what" >&2
	if ! (cd "$src" && GOWORK=off GOFLAGS="-buildvcs=false -mod=readonly" CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w" -o "$out.tmp.$$" .); then
		rm -f "$out.tmp.$$"
		echo "backends: building $what failed" >&2
		return 1
	fi
	mv "$out.tmp.$$" "$out"
	echo "backends: built $what in $(($(date +%s) - start))s" >&2
	echo "$out"
}

# cadvisorhost: cAdvisor's binary lives in its cmd module, which the module
# proxy does not serve; its root module up to v0.57.0 (not v0.60 on) holds
# the manager and metrics packages the binary is made of, and
# tools/cadvisorhost (its own module, pinning v0.55.1, so the plugin's go.mod never takes cAdvisor's
# dependencies) serves their series the way the binary does. The cache name
# carries a hash of the host's sources (pkg/internal/promtest computes the
# same), so a change to them builds a new one.
cadvisorhost() {
	build_tool cadvisorhost "the cAdvisor host (tools/cadvisorhost, cAdvisor v0.55.1)"
}

# otelcol: an OpenTelemetry Collector made of the Collector's own modules
# (tools/otelcolhost, its own module: otelcol and otlphttpexporter v0.165.0,
# the contrib Prometheus receiver, groupbyattrs and resource processors
# v0.165.1, one release), so the plugin's go.mod never takes the Collector's
# dependencies; the OTLP tests send the simulated fleet through it into
# Prometheus 3's OTLP receiver. Cached by a hash of its sources, like the
# cAdvisor host (pkg/internal/promtest computes the same).
otelcol() {
	build_tool otelcolhost "the OpenTelemetry Collector (tools/otelcolhost, Collector v0.165.0)"
}

case "${1:-all}" in
prometheus) prometheus ;;
promtool) promtool ;;
thanos) thanos ;;
cadvisorhost) cadvisorhost ;;
otelcol) otelcol ;;
all)
	prometheus
	promtool
	thanos
	cadvisorhost
	otelcol
	;;
*)
	echo "usage: $0 [prometheus|promtool|thanos|cadvisorhost|otelcol|all]" >&2
	exit 2
	;;
esac
