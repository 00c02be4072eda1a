#!/usr/bin/env bash
# Release build: the frontend in production mode, the backend for every platform Grafana runs on (cgo-free, with
# the SDK's mage build targets), packed into release/inferops-vllm-datasource-<version>.zip (one top folder
# inferops-vllm-datasource/) plus its .sha256, then checked offline with the catalogue validator's checks
# (go run ./cmd/plugin-release check). The version comes from package.json: webpack writes it into plugin.json,
# the SDK's build into the binaries' build info, and the pack step into the archive's name.
# For the Linux platforms it also writes the node agent's archives, release/vllm-node-agent-<version>-linux-<arch>.tar.gz
# (+ .sha256), built with cgo (linux/arm64 with Debian's gcc-aarch64-linux-gnu, installed with apt-get when missing)
# and checked with `plugin-release check-agent`.
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

# cc_for ARCH: the C compiler that builds the node agent (cgo, for go-nvml) for linux/ARCH on this machine: the
# system gcc for the machine's own architecture, Debian's cross compiler otherwise (installed when missing).
cc_for() {
  local arch="$1" host cross
  if [[ "$(go env GOHOSTOS)" != linux ]]; then
    echo "the node agent archives (cgo, glibc) are built on Linux; use --platforms without linux/* here" >&2
    return 1
  fi
  host=$(go env GOHOSTARCH)
  if [[ "$arch" == "$host" ]]; then
    echo gcc
    return
  fi
  case "$arch" in
    arm64) cross=aarch64-linux-gnu ;;
    amd64) cross=x86_64-linux-gnu ;;
    *) echo "no C cross compiler known for linux/${arch}" >&2; return 1 ;;
  esac
  if ! command -v "${cross}-gcc" >/dev/null 2>&1; then
    local pkgs=("gcc-${cross//_/-}" "libc6-dev-${arch}-cross") sudo=""
    echo "==> package: installing the C cross compiler ${pkgs[*]} (apt-get)" >&2
    [[ "$(id -u)" -ne 0 ]] && sudo="sudo"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } >&2 || {
      echo "cannot install ${pkgs[*]}: the node agent for linux/${arch} needs a C cross compiler (cgo)" >&2
      return 1
    }
  fi
  echo "${cross}-gcc"
}

# build_agent OS/ARCH VERSION OUT: builds vllm-node-agent with cgo (go-nvml loads libnvidia-ml.so.1 with dlopen at
# run time, so the binary starts without the driver and links only libc) and packs
# OUT/vllm-node-agent-VERSION-OS-ARCH.tar.gz and its .sha256: entries owned by root, sorted, dated 1970, so the
# same build packs the same bytes. No -s: the symbol table lets `plugin-release check-agent` read main.version.
build_agent() {
  local platform="$1" version="$2" outdir="$3" os arch cc name stage
  os="${platform%%/*}"
  arch="${platform##*/}"
  cc=$(cc_for "$arch")
  name="vllm-node-agent-${version}-${os}-${arch}"
  stage=$(mktemp -d)
  mkdir -p "${stage}/${name}" "$outdir"
  CGO_ENABLED=1 GOOS="$os" GOARCH="$arch" CC="$cc" CGO_CFLAGS="-O2 -Wno-deprecated-declarations" \
    go build -trimpath -ldflags "-w -X main.version=${version}" -o "${stage}/${name}/vllm-node-agent" ./cmd/vllm-node-agent
  install -m 0644 deploy/systemd/vllm-node-agent.service deploy/systemd/vllm-node-agent.env LICENSE "${stage}/${name}/"
  chmod 0755 "${stage}/${name}/vllm-node-agent"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$name" | gzip -n >"${outdir}/${name}.tar.gz"
  (cd "$outdir" && sha256sum "${name}.tar.gz" >"${name}.tar.gz.sha256")
  rm -rf "$stage"
  echo "==> package: wrote ${outdir}/${name}.tar.gz and ${outdir}/${name}.tar.gz.sha256"
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
  step "npm ci (or its cached copy)" bash scripts/npm-install.sh
fi
# A clean dist/: nothing from a development build or an older version may end up in the archive.
rm -rf dist
step "frontend (production build)" npm run build
step "backend (${platforms})" go run github.com/magefile/mage -v "${targets[@]}"
zip_path=$(go run ./cmd/plugin-release pack -dist dist -out "$out")
echo "==> package: wrote ${zip_path} and ${zip_path}.sha256"
step "offline catalogue checks" go run ./cmd/plugin-release check -source . -platforms "$platforms" "$zip_path"

# The node agent, for the Linux platforms among those asked for: one .tar.gz each with the binary, the systemd
# unit and its environment file, and the LICENSE, then checked (pkg/release CheckAgent).
agent_platforms=()
for p in "${wanted[@]}"; do
  if [[ "$p" == linux/* ]]; then
    agent_platforms+=("$p")
  fi
done
if ((${#agent_platforms[@]} > 0)); then
  version=$(node -p "require('./package.json').version")
  agent_archives=()
  for p in "${agent_platforms[@]}"; do
    step "node agent (${p})" build_agent "$p" "$version" "$out"
    agent_archives+=("${out}/vllm-node-agent-${version}-${p%%/*}-${p##*/}.tar.gz")
  done
  step "node agent archive checks" go run ./cmd/plugin-release check-agent -source . -version "$version" "${agent_archives[@]}"
fi
echo "==> package: ${zip_path} in $((SECONDS - start)) s"
