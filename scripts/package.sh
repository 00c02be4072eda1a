#!/usr/bin/env bash
# Release build: the frontend in production mode, the backend for every platform Grafana runs on (cgo-free, with
# the SDK's mage build targets), packed into release/inferops-vllm-datasource-<version>.zip (one top folder
# inferops-vllm-datasource/) plus its .sha256, then checked offline with the catalogue validator's checks
# (go run ./cmd/plugin-release check). The version comes from package.json: webpack writes it into plugin.json,
# the SDK's build into the binaries' build info, and the pack step into the archive's name.
#
#   scripts/package.sh                                     # all five platforms
#   scripts/package.sh --platforms linux/amd64,darwin/arm64  # a quicker archive for some platforms only
#   scripts/package.sh --out /tmp/rel                      # write the archive elsewhere (default: release/)
#
# Works on a fresh machine with Go and Node >= 20 (npm ci runs when node_modules is missing or stale).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ALL_PLATFORMS="linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64"
platforms="$ALL_PLATFORMS"
out="release"
while (($# > 0)); do
  case "$1" in
    --platforms) platforms="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument $1; usage: scripts/package.sh [--platforms os/arch,...] [--out DIR]" >&2; exit 2 ;;
  esac
done

step() {
  local name="$1"
  shift
  local start=$SECONDS
  echo "==> package: ${name}"
  "$@"
  echo "==> package: ${name} ok in $((SECONDS - start)) s"
}

# The SDK's mage target for each platform (github.com/grafana/grafana-plugin-sdk-go/build).
mage_target() {
  case "$1" in
    linux/amd64) echo build:linux ;;
    linux/arm64) echo build:linuxARM64 ;;
    darwin/amd64) echo build:darwin ;;
    darwin/arm64) echo build:darwinARM64 ;;
    windows/amd64) echo build:windows ;;
    *) echo "unsupported platform $1; allowed: ${ALL_PLATFORMS}" >&2; return 1 ;;
  esac
}

targets=()
IFS=',' read -r -a wanted <<<"$platforms"
for p in "${wanted[@]}"; do
  targets+=("$(mage_target "$p")")
done

needs_install() {
  [[ ! -f node_modules/.package-lock.json ]] && return 0
  [[ package-lock.json -nt node_modules/.package-lock.json ]] && return 0
  return 1
}

start=$SECONDS
if needs_install; then
  step "npm ci" npm ci --no-audit --no-fund
fi
# A clean dist/: nothing from a development build or an older version may end up in the archive.
rm -rf dist
step "frontend (production build)" npm run build
step "backend (${platforms})" go run github.com/magefile/mage -v "${targets[@]}"
zip_path=$(go run ./cmd/plugin-release pack -dist dist -out "$out")
echo "==> package: wrote ${zip_path} and ${zip_path}.sha256"
step "offline catalogue checks" go run ./cmd/plugin-release check -source . -platforms "$platforms" "$zip_path"
echo "==> package: ${zip_path} in $((SECONDS - start)) s"
