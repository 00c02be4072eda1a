#!/usr/bin/env bash
# Frontend gate: install (when needed), typecheck, lint, prettier --check, Grafana API compatibility (levitate; a passing answer is
# reused while its inputs are unchanged, FRONTEND_COMPAT_CACHE=off runs it again), unit tests,
# production build, then check what the build wrote into dist/, load dist/module.js in a test, and drive the
# editors in a real browser (Debian's Chromium).
# Works on a machine that never saw the project: Node ^20.19 || ^22.13 || >=24 (package.json engines) and the npm
# registry, plus apt for Chromium when /usr/bin/chromium is missing.
#
#   scripts/frontend-check.sh            # install only when node_modules is missing or older than the lockfile
#   FRONTEND_CI_INSTALL=always scripts/frontend-check.sh   # always start from a clean `npm ci` (never the cached copy)
#   CHROMIUM=/path/to/chrome scripts/frontend-check.sh    # use another Chromium instead of /usr/bin/chromium
#   GRAFANA_COMPAT_VERSIONS="11.6.0 12.0.0" scripts/frontend-check.sh   # check other Grafana versions' APIs
#   scripts/frontend-check.sh checks     # only install, typecheck, lint, prettier, compatibility and jest (nothing in dist/)
#   scripts/frontend-check.sh dist       # only the build, dist/ checks and the browser check
# The two phases let scripts/test.sh run the checks beside the Go tests (they write nothing the Go tests read) and
# the build afterwards (it rewrites dist/, which the release and host tests read while they run).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

phase="${1:-all}"
case "$phase" in
  all | checks | dist) ;;
  *) echo "unknown phase ${phase}; usage: scripts/frontend-check.sh [all|checks|dist]" >&2; exit 2 ;;
esac

PLUGIN_ID="inferops-vllm-datasource"
EXECUTABLE="gpx_vllm"

# Runs one step and prints how long it took, so slow steps show up in CI logs.
step() {
  local name="$1"
  shift
  local start=$SECONDS
  echo "==> ${name}: $*"
  "$@"
  echo "==> ${name}: ok in $((SECONDS - start)) s"
}

# npm writes node_modules/.package-lock.json after every install; if package-lock.json is newer, the installed
# tree may not match it any more.
needs_install() {
  [[ "${FRONTEND_CI_INSTALL:-auto}" == "always" ]] && return 0
  [[ ! -f node_modules/.package-lock.json ]] && return 0
  [[ package-lock.json -nt node_modules/.package-lock.json ]] && return 0
  return 1
}

# The lockfile's packages need ^20.19.0 || ^22.13.0 || >=24 (sass, chokidar and yargs from 20.19, eslint-visitor-keys
# from 22.13 on the 22 line; Node 21 and 23 are refused by some).
if ! node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  const ok = (major === 20 && minor >= 19) || (major === 22 && minor >= 13) || major >= 24;
  process.exit(ok ? 0 : 1);'; then
  echo "Node ^20.19.0 || ^22.13.0 || >=24 is required (package.json engines), found $(node --version)" >&2
  exit 1
fi

# Grafana versions whose @grafana/data, ui and runtime APIs the source must fit: the oldest the plugin claims
# (plugin.json grafanaDependency) and the newest release. Keep the first in step with grafanaDependency.
GRAFANA_COMPAT_VERSIONS="${GRAFANA_COMPAT_VERSIONS:-11.6.0 13.2.3}"

# Grafana's API-compatibility check (as @grafana/create-plugin's CI runs it): every @grafana/* export the source
# uses must exist, with a compatible signature, in each version. Downloads those packages from the npm registry.
compat() {
  local version
  for version in $GRAFANA_COMPAT_VERSIONS; do
    npx --no-install levitate is-compatible --path src/module.ts \
      --target "@grafana/data@${version},@grafana/ui@${version},@grafana/runtime@${version}"
  done
}

# compat_key: a hash of everything the compatibility check's answer depends on: the source it reads (src/, the
# tsconfigs), the installed packages (package-lock.json), levitate's and Node's versions and the Grafana versions
# checked. The published @grafana packages it downloads never change under a version, so an answer computed from
# the same inputs is the same answer.
compat_key() {
  local files levitate
  levitate=$(node -p 'JSON.parse(require("fs").readFileSync("node_modules/@grafana/levitate/package.json")).version') ||
    return 1
  files=$(git ls-files --cached --others --exclude-standard -- src tsconfig.json .config/tsconfig.json \
    package-lock.json 2>/dev/null | LC_ALL=C sort) || return 1
  [[ -n "$files" ]] || return 1
  {
    echo "grafana versions: $GRAFANA_COMPAT_VERSIONS"
    echo "node $(node --version); levitate $levitate"
    printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 sha256sum --
  } | sha256sum | cut -c1-32
}

# compat_cached: the compatibility check, its passing answer reused (like go test's cache) when every input is
# byte for byte the one it was computed from (~88 s of CPU otherwise, most of it levitate reading @grafana/ui's
# types). FRONTEND_COMPAT_CACHE=off always runs it.
compat_cached() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/inferops-vllm/compat" key=""
  if [[ "${FRONTEND_COMPAT_CACHE:-on}" != off ]] && key=$(compat_key) && [[ -s "$dir/$key.log" ]]; then
    echo "compatibility: passed from these exact inputs at $(date -u -r "$dir/$key.log" '+%Y-%m-%d %H:%M UTC'); answer reused" \
      "(FRONTEND_COMPAT_CACHE=off runs it again):"
    cat "$dir/$key.log"
    return 0
  fi
  local log
  log=$(mktemp)
  if ! compat 2>&1 | tee "$log"; then
    rm -f "$log"
    return 1
  fi
  if [[ -n "$key" ]]; then
    mkdir -p "$dir"
    mv "$log" "$dir/$key.log"
  else
    rm -f "$log"
  fi
}

if [[ "$phase" != dist ]]; then
  if needs_install; then
    step "install" bash scripts/npm-install.sh
  else
    echo "==> install: node_modules is up to date with package-lock.json, skipping npm ci"
  fi

  step "typecheck" npm run typecheck
  step "lint" npm run lint
  step "format" npm run format:check
  step "grafana compatibility" compat_cached
  step "test" npm run test:ci
fi
[[ "$phase" == checks ]] && exit 0

step "build" npm run build

# The build must leave a loadable plugin frontend: the bundle, and plugin.json as a real file (src/plugin.json is a
# symlink to the top-level plugin.json) with the right id/executable and the %VERSION%/%TODAY% placeholders filled.
echo "==> dist: checking build output"
test -s dist/module.js || { echo "dist/module.js is missing or empty" >&2; exit 1; }
test -f dist/plugin.json || { echo "dist/plugin.json is missing" >&2; exit 1; }
test ! -L dist/plugin.json || { echo "dist/plugin.json is a symlink, expected a copy" >&2; exit 1; }
node - "$PLUGIN_ID" "$EXECUTABLE" <<'JS'
const fs = require('fs');
const [id, executable] = process.argv.slice(2);
const text = fs.readFileSync('dist/plugin.json', 'utf8');
const plugin = JSON.parse(text);
const problems = [];
if (plugin.id !== id) problems.push(`id is ${JSON.stringify(plugin.id)}, want ${JSON.stringify(id)}`);
if (plugin.executable !== executable) problems.push(`executable is ${JSON.stringify(plugin.executable)}, want ${JSON.stringify(executable)}`);
if (plugin.backend !== true) problems.push('backend is not true');
if (/%(VERSION|TODAY)%/.test(text)) problems.push('%VERSION% / %TODAY% placeholders were not replaced');
if (problems.length) {
  console.error('dist/plugin.json: ' + problems.join('; '));
  process.exit(1);
}
console.log(`==> dist: ok (${plugin.id}, executable ${plugin.executable}, version ${plugin.info.version})`);
JS

# The bundle must load the way Grafana loads it (AMD, with Grafana's React and @grafana/* as dependencies) and
# export a DataSourcePlugin with working editors. This needs dist/, hence after the build.
step "dist test" npm run test:dist

# Browser check: the editors in a real Chromium (playwright-core drives it; it never downloads a browser).
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
  if [[ "$CHROMIUM" != /usr/bin/chromium ]]; then
    echo "CHROMIUM=$CHROMIUM is not an executable" >&2
    exit 1
  fi
  as_root=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || { echo "/usr/bin/chromium is missing and apt-get needs root (no sudo found)" >&2; exit 1; }
    as_root=(sudo)
  fi
  step "chromium" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    sh -c 'apt-get update && apt-get install -y --no-install-recommends chromium'
fi
export CHROMIUM
step "browser" npm run e2e:browser
