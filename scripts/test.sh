#!/usr/bin/env bash
# The whole test suite, from a machine that has never seen the project:
# installs what it needs (Prometheus, VictoriaMetrics and Chromium from
# Debian, Go modules, npm packages; Prometheus 3 built from the
# Go module proxy into ~/.cache/inferops-vllm by scripts/backends.sh),
# then runs Go vet and tests (unit, integration against every back end, go-plugin host tests, short fuzzing), the backend build,
# and the frontend's typecheck, lint, jest, build and browser check.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

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

step "system packages (prometheus, promtool, victoria-metrics)"
apt_install prometheus victoria-metrics

step "go modules"
go mod download

step "back ends: Prometheus 3 from the Go module proxy (cached; built only when missing)"
backends_start=$(date +%s)
bash scripts/backends.sh prometheus
echo "back ends ready in $(($(date +%s) - backends_start))s"

step "go vet"
go vet ./pkg/... ./cmd/...

step "gofmt"
unformatted=$(gofmt -l pkg cmd Magefile.go)
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

step "go test (unit, integration against real Prometheus, host)"
# -parallel: integration tests wait seconds on Prometheus' first scrape, so
# they overlap; they are I/O bound, not CPU bound.
go test -count=1 -parallel 6 -timeout 20m ./pkg/... ./cmd/...

step "fuzz (a few seconds each, seed corpus of nasty cases)"
go test -run '^$' -fuzz '^FuzzParseQuery$' -fuzztime 5s ./pkg/models/
go test -run '^$' -fuzz '^FuzzBuilders$' -fuzztime 5s ./pkg/vllm/
go test -run '^$' -fuzz '^FuzzCompute$' -fuzztime 5s ./pkg/interval/

step "backend build (mage build:linux)"
go run github.com/magefile/mage -v build:linux
test -x dist/gpx_vllm_linux_amd64

step "frontend (npm ci, typecheck, lint, jest, build, browser check)"
bash scripts/frontend-check.sh

echo
echo "All checks passed."
