#!/usr/bin/env bash
# Installs node_modules as `npm ci` does, from a copy in the project's cache
# (~/.cache/inferops-vllm/node_modules) when package.json, package-lock.json,
# Node's version and the machine are the ones that copy was made from.
#
# Why: on a fresh clone `npm ci` spends over a minute writing 100,000 files
# even with npm's download cache warm; unpacking the same tree takes seconds.
# The copy is made right after a real `npm ci` (never after a build, so no
# tool cache rides along), and only one is kept.
#
#   scripts/npm-install.sh                        # from the cache when it matches, else npm ci
#   FRONTEND_CI_INSTALL=always scripts/npm-install.sh  # always a real npm ci (and a new copy)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/inferops-vllm/node_modules"
key=$({ cat package.json package-lock.json; node --version; uname -sm; } | sha256sum | cut -c1-16)
archive="${cache}/${key}.tar"

if [[ "${FRONTEND_CI_INSTALL:-auto}" != always && -s "$archive" ]]; then
  rm -rf node_modules
  tar -xf "$archive"
  # The frontend scripts reinstall when the lockfile is newer than this file.
  touch node_modules/.package-lock.json
  echo "==> node_modules unpacked from ${archive} (package.json and package-lock.json unchanged)"
  exit 0
fi

npm ci --no-audit --no-fund
mkdir -p "$cache"
tmp="${archive}.tmp.$$"
if tar -cf "$tmp" node_modules; then
  find "$cache" -name '*.tar' ! -name "${key}.tar" -delete
  mv "$tmp" "$archive"
  echo "==> node_modules kept in ${archive} for the next fresh clone"
else
  rm -f "$tmp"
  echo "==> could not keep a copy of node_modules in ${cache} (the next fresh clone runs npm ci again)" >&2
fi
