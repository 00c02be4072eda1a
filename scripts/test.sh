#!/usr/bin/env bash
# The whole test suite, from a machine that has never seen the project:
# installs what it needs (Prometheus, VictoriaMetrics, Alertmanager, systemd
# and Chromium from Debian, Go modules, npm packages; Prometheus 3, its
# promtool and Thanos built from the Go module proxy into ~/.cache/inferops-vllm
# by scripts/backends.sh), then runs Go
# vet and tests (unit, integration against every back end, go-plugin host
# tests, short fuzzing, the mutation score of pkg/health and pkg/frames),
# the release archive (scripts/package.sh, checked and installed by
# pkg/release's tests), the backend build, and the frontend's typecheck,
# lint, jest, build and browser check.
set -euo pipefail
cd "$(dirname "$0")/.."

# step NAME: prints how long the previous step took and the suite so far, so
# the slow steps show in CI's log (the suite must stay within its time budget).
suite_start=$SECONDS
step_start=$SECONDS
step_name=""
step() {
	[ -n "$step_name" ] && printf '==> %s: %d s (suite %d s)\n' "$step_name" $((SECONDS - step_start)) $((SECONDS - suite_start))
	step_name="$*"
	step_start=$SECONDS
	printf '\n==> %s\n' "$*"
}

apt_install() {
	local missing=()
	for pkg in "$@"; do
		dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Prometheus 3 and Thanos are built (only when missing from the cache: the
# first run on a machine, about 12 minutes of compiling) in the background
# while the steps below download, install and package; the Go tests wait
# for them.
backends_log=$(mktemp)
bash scripts/backends.sh >"$backends_log" 2>&1 &
backends_pid=$!
frontend_pid=""
# A failed step ends the suite; the background jobs end with it.
# stop_jobs PID...: ends background jobs and the processes they started (go test, gremlins).
stop_jobs() {
	local p
	for p in "$@"; do
		pkill -TERM -P "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
	done
}
trap 'stop_jobs $backends_pid' EXIT

# wait_logged NAME PID LOG: waits for a background job, prints its output, and ends the suite if it failed.
wait_logged() {
	local ok=1
	wait "$2" || ok=0
	cat "$3"
	rm -f "$3"
	if [ "$ok" -ne 1 ]; then
		echo "$1 failed (its output is above)" >&2
		exit 1
	fi
}

# node_modules, the same way: npm ci (or its cached copy, scripts/npm-install.sh) mostly waits on the registry
# and the disk, so it runs while vet compiles; the release archive waits for it.
npm_log=$(mktemp)
bash scripts/npm-install.sh >"$npm_log" 2>&1 &
npm_pid=$!
trap 'stop_jobs $backends_pid $npm_pid' EXIT

# Every Debian package the suite uses, in one apt transaction: the back ends; Chromium for the frontend's browser
# check (unless CHROMIUM names another); the arm64 C cross compiler for the node agent's linux/arm64 archive;
# systemd for systemd-analyze verify on the node agent's unit and Alertmanager (amtool) for the routing tests (pkg/deploytest).
system_packages=(prometheus victoria-metrics prometheus-node-exporter prometheus-alertmanager systemd)
[ -z "${CHROMIUM:-}" ] && system_packages+=(chromium)
case ",${PACKAGE_PLATFORMS:-linux/arm64}," in
*,linux/arm64,*) [ "$(uname -m)" = x86_64 ] && system_packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross) ;;
esac
step "system packages (${system_packages[*]})"
apt_install "${system_packages[@]}"

step "go modules"
go mod download

step "C toolchain (gcc: the node agent's NVML tests need cgo)"
# Without a C compiler the go command turns cgo off, and the NVML tests
# (//go:build cgo) report "no test files" instead of running: install gcc, or
# stop here and say so.
command -v gcc >/dev/null 2>&1 || apt_install gcc libc6-dev || true
if ! command -v gcc >/dev/null 2>&1; then
	echo "gcc is missing and could not be installed (apt-get install gcc libc6-dev): the NVML tests need cgo" >&2
	exit 1
fi
if [ "$(go env CGO_ENABLED)" != "1" ]; then
	echo "cgo is off (CGO_ENABLED=$(go env CGO_ENABLED)): the NVML tests would not run; unset CGO_ENABLED" >&2
	exit 1
fi
if [ -z "$(go list -f '{{join .TestGoFiles " "}}' ./pkg/nodeagent/nvmlsource)" ]; then
	echo "pkg/nodeagent/nvmlsource has no test files in this build: the NVML tests would silently drop out" >&2
	exit 1
fi

# Every Go step below builds the way the release does (the SDK's mage targets: cgo off, the tag
# arrow_json_stdlib), so vet, the test binaries, the plugin the host tests launch, the fuzzers' seeds, the
# mutants and the release's linux/amd64 plugin share one compiled dependency graph instead of three (the tests
# with cgo, the host tests' plugin without the tag, the release with it): the tests check the build that ships.
# The two packages with cgo code (NVML) are vetted and tested again with cgo on, in steps of their own.
export CGO_ENABLED=0
GO_RELEASE_TAGS=arrow_json_stdlib
export GO_RELEASE_TAGS
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=$GO_RELEASE_TAGS"
CGO_PACKAGES=(./pkg/nodeagent/nvmlsource/ ./cmd/vllm-node-agent/)

step "go vet (as released: cgo off; then the NVML packages with cgo on)"
go vet ./pkg/... ./cmd/...
CGO_ENABLED=1 go vet "${CGO_PACKAGES[@]}"

step "gofmt"
unformatted=$(gofmt -l pkg cmd Magefile.go)
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

# The release archive, before the Go tests: pkg/release checks it with the catalogue's offline checks, breaks
# it on purpose, and installs it into a temporary plugins folder and launches its binary over go-plugin.
PACKAGE_PLATFORMS="${PACKAGE_PLATFORMS:-linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64}"
step "release archive (scripts/package.sh for ${PACKAGE_PLATFORMS}: frontend, backend, offline catalogue checks)"
wait_logged scripts/npm-install.sh "$npm_pid" "$npm_log"
bash scripts/package.sh --platforms "$PACKAGE_PLATFORMS"
VLLM_PLUGIN_ARCHIVE="$PWD/release/inferops-vllm-datasource-$(node -p "require('./package.json').version").zip"
VLLM_PLUGIN_PLATFORMS="$PACKAGE_PLATFORMS"
export VLLM_PLUGIN_ARCHIVE VLLM_PLUGIN_PLATFORMS

# The frontend's checks (typecheck, lint, prettier, Grafana API compatibility, jest) read only src/ and node_modules (which
# package.sh installed), so they run beside the Go tests, which spend most of their time waiting on Prometheus'
# scrapes; the build and browser check come after them, since the build rewrites dist/.
frontend_log=$(mktemp)
nice -n 5 bash scripts/frontend-check.sh checks >"$frontend_log" 2>&1 &
frontend_pid=$!
trap 'stop_jobs $backends_pid $frontend_pid' EXIT

step "back ends: Prometheus 3, Thanos, the cAdvisor host and the Collector from the Go module proxy (started in the background at the top)"
if ! wait "$backends_pid"; then
	cat "$backends_log" >&2
	echo "scripts/backends.sh failed: the integration tests need Prometheus 3, Thanos, the cAdvisor host and the OpenTelemetry Collector" >&2
	exit 1
fi
cat "$backends_log"
rm -f "$backends_log"

# Fuzzing and the mutation score use the CPU and nothing else; the Go tests spend most of their time waiting on
# Prometheus' scrapes. So both start with the tests, at the lowest priority (nice 19: they take what the tests
# leave), and their own steps below wait for them and print their output.
#
# Fuzz budgets are counts of executions (about five seconds each on two idle cores), not durations: a duration
# races Go 1.26's fuzz coordinator at its deadline and fails with a bare "context deadline exceeded" and no
# failing input (golang/go#75804, fixed in Go 1.27; seen here on FuzzBuilders).
#
# The fuzzers instrument every package of their target's test binary, so pkg/models, pkg/vllm and pkg/interval
# build without the plugin SDK (about 94 packages instead of 405: the SDK's backend brings gRPC, Arrow and
# OpenTelemetry), which keeps the cold fuzzing build short; this fails if an import brings it back.
if sdk=$(go list -test -deps ./pkg/models/ ./pkg/vllm/ ./pkg/interval/ | grep grafana-plugin-sdk-go); then
	echo "pkg/models, pkg/vllm or pkg/interval (or a test of theirs) imports the plugin SDK; keep it out" \
		"(docs/development.md, The two commands):" $sdk >&2
	exit 1
fi
fuzz_log=$(mktemp)
nice -n 19 bash -c 'set -e
	go test -run "^\$" -fuzz "^FuzzParseQuery\$" -fuzztime 20000x ./pkg/models/
	go test -run "^\$" -fuzz "^FuzzParseSLO\$" -fuzztime 20000x ./pkg/models/
	go test -run "^\$" -fuzz "^FuzzBuilders\$" -fuzztime 5000x ./pkg/vllm/
	go test -run "^\$" -fuzz "^FuzzCompute\$" -fuzztime 10000x ./pkg/interval/' >"$fuzz_log" 2>&1 &
fuzz_pid=$!
# The mutation score: the unit tiers of pkg/health and pkg/frames, whose mutants cost seconds each (168 mutants,
# about nine minutes of both cores). pkg/vllm (768 mutants, 21 minutes of both cores), pkg/query, pkg/interval
# and pkg/models are in the full run (see docs/development.md, Mutation
# score). A package's report is reused, as go test reuses a result, only when every file Go code can read is byte
# for byte what it was computed from (scripts/mutation.sh, input_key): a warm run skips gremlins unless the change
# touched the package, a package its tests import, or a file outside the Go packages. A mutant's tests count as timed out only after ten times
# the coverage run's time (MUTATION_TIMEOUT_COEFFICIENT), since they share the machine with the Go tests.
mutation_log=$(mktemp)
MUTATION_NICE=19 MUTATION_TIMEOUT_COEFFICIENT="${MUTATION_TIMEOUT_COEFFICIENT:-10}" \
	MUTATION_WORKERS="${MUTATION_WORKERS:-2}" bash scripts/mutation.sh pkg/health pkg/frames >"$mutation_log" 2>&1 &
mutation_pid=$!
trap 'stop_jobs $backends_pid $frontend_pid $fuzz_pid $mutation_pid' EXIT

step "go test (unit, integration against real Prometheus, host; fuzz and mutation beside it)"
# -parallel and -p: integration tests wait seconds on Prometheus' scrapes, so
# they overlap, within a package and across the three long packages (query,
# plugin, deploytest); they are I/O bound, not CPU bound.
# pkg/internal/fleetbench is left out here because its tests (the fleet bench, the fleet table, the rules bench,
# and the unit tests of the bench's own arithmetic) are what the bench step below runs, with the package's own
# small defaults (scripts/bench.sh --short): once, not twice.
go test -count=1 -p 3 -parallel 6 -timeout 20m $(go list ./pkg/... ./cmd/... | grep -v -x 'github.com/inferops/vllm-datasource/pkg/internal/fleetbench')

step "go test, cgo on (the NVML packages)"
CGO_ENABLED=1 go test -count=1 "${CGO_PACKAGES[@]}"

step "fuzz (a few seconds each, seed corpus of nasty cases; started beside go test)"
wait_logged fuzz "$fuzz_pid" "$fuzz_log"

step "mutation score (unit tiers of pkg/health and pkg/frames; the full run is scripts/mutation.sh; started beside go test)"
wait_logged "scripts/mutation.sh" "$mutation_pid" "$mutation_log"

step "fleet bench, short (scripts/bench.sh --short: backfilled Prometheus, plugin vs raw HTTP; no timing asserted)"
# The bench runs pkg/internal/fleetbench's tests by name; a test it does not name would run nowhere.
fleetbench_tests=$(go test -list . ./pkg/internal/fleetbench/ | grep '^Test' | sort | tr '\n' ' ')
if [ "$fleetbench_tests" != "TestFleetBench TestFleetTableBench TestInstantStats TestMemoryCells TestRenderProfile TestRulesBench " ]; then
	echo "pkg/internal/fleetbench has tests scripts/bench.sh does not run: $fleetbench_tests" >&2
	exit 1
fi
bash scripts/bench.sh --short

step "backend build (mage build:linux)"
go run github.com/magefile/mage -v build:linux
test -x dist/gpx_vllm_linux_amd64

step "frontend checks (typecheck, lint, prettier, Grafana compatibility, jest; started after the release archive)"
wait_logged "scripts/frontend-check.sh checks" "$frontend_pid" "$frontend_log"

step "frontend build (production build, dist/ checks, browser check)"
bash scripts/frontend-check.sh dist

step "done"
echo
echo "All checks passed in $((SECONDS - suite_start)) s."
