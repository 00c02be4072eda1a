#!/usr/bin/env bash
# Mutation score of the packages whose tests state what the code means.
#
#   bash scripts/mutation.sh                    # all six packages (the full run)
#   bash scripts/mutation.sh pkg/vllm pkg/frames  # some of them
#
# Installs gremlins (github.com/go-gremlins/gremlins, from the Go module
# proxy) into the project's cache, mutates each package's code one change at
# a time, runs that package's unit tests against each mutant, and prints a
# table of killed / lived / not covered per package. Each mutant runs the unit
# tier only: the build tag "mutation" leaves out the integration tests that
# start a real Prometheus (pkg/query, pkg/health); those run in the normal
# suite (scripts/test.sh) instead.
#
# Mutants listed in scripts/mutation-equivalent.txt (file:line:column TYPE,
# with the reason) cannot change behaviour and are left out of the score.
# Exits non-zero when a package scores below MUTATION_THRESHOLD (default 90).
#
# Environment: MUTATION_WORKERS (default 1: the machine has two cores, shared),
# MUTATION_TIMEOUT seconds per package (default 1800), MUTATION_OUT (a folder
# that keeps the JSON reports; default a temporary one), MUTATION_CACHE
# (default on; "off" always runs gremlins), MUTATION_NICE (gremlins' niceness,
# default 10), MUTATION_TIMEOUT_COEFFICIENT (a mutant's tests time out after
# this many times the coverage run's time; default 5), GO_RELEASE_TAGS (build
# tags added to "mutation"; scripts/test.sh sets the release's).
#
# Results are cached (~/.cache/inferops-vllm/mutation), like go test's cache:
# gremlins' report for a package is reused only when every input it could
# depend on is byte for byte the one it was computed from: every file of the
# checkout that the package's test binary can read (all tracked and
# untracked, not ignored, files except the frontend's src/, docs/, the
# top-level Markdown and the module's other Go packages, those the package's
# tests do not import), go.mod and go.sum among them, this script, and the
# Go, gremlins, OS and architecture versions. Any change to the package, a
# package it imports, their tests or testdata, or a file outside the Go
# packages runs it again. The score is always computed afresh from the
# reports, so a change to the equivalents list needs no new run.
set -euo pipefail
cd "$(dirname "$0")/.."

GREMLINS_VERSION=v0.6.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/inferops-vllm"
bin="$cache/bin"
gremlins="$bin/gremlins-$GREMLINS_VERSION"
if [ ! -x "$gremlins" ]; then
	echo "installing gremlins $GREMLINS_VERSION into $bin"
	mkdir -p "$bin"
	GOBIN="$bin" go install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
	mv "$bin/gremlins" "$gremlins"
fi

results="$cache/mutation"

# input_key PKG: a hash of everything a package's mutation report depends on
# (see the header); fails outside a git checkout, which then runs uncached.
input_key() {
	local files
	files=$(git ls-files --cached --others --exclude-standard 2>/dev/null |
		grep -v -E '^(src/|docs/|[^/]*\.md$)' | LC_ALL=C sort | outside_other_packages "$1") || return 1
	[ -n "$files" ] || return 1
	{
		echo "package $1"
		echo "gremlins $GREMLINS_VERSION; $(go version); $(uname -sm)"
		echo "GOFLAGS=$(go env GOFLAGS) CGO_ENABLED=$(go env CGO_ENABLED) GO_RELEASE_TAGS=${GO_RELEASE_TAGS:-} coefficient=$coefficient"
		# Paths and contents both: a renamed file is a different input. A
		# listed file deleted from the working tree fails the key (uncached).
		printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 sha256sum --
	} | sha256sum | cut -c1-32
}

# outside_other_packages PKG: filters the file list on stdin down to what
# PKG's mutants can depend on: it drops the files of the module's Go
# packages that PKG's test binary does not import (their code cannot reach
# the mutants' builds; their testdata is read only by their own tests), so
# a change to pkg/query or cmd/ does not run pkg/frames' mutants again.
# Everything else stays: the packages PKG's tests import (with their
# testdata), go.mod and go.sum, and every file outside a Go package (rules,
# dashboards, scripts), which code in those packages may read.
outside_other_packages() {
	local mod tags all deps
	mod=$(go list -m) || return 1
	tags="mutation${GO_RELEASE_TAGS:+,$GO_RELEASE_TAGS}"
	all=$(go list -tags "$tags" -e -f '{{.Dir}}' ./...) || return 1
	deps=$(go list -tags "$tags" -deps -test -f '{{if .Module}}{{if eq .Module.Path "'"$mod"'"}}{{.Dir}}{{end}}{{end}}' "./$1") || return 1
	[ -n "$deps" ] || return 1
	# A file belongs to the deepest package folder above it.
	awk -v root="$PWD/" -v all="$all" -v deps="$deps" '
		BEGIN {
			n = split(all, a, "\n"); for (i = 1; i <= n; i++) if (a[i] != "") pkg[substr(a[i], length(root) + 1)] = 1
			n = split(deps, d, "\n"); for (i = 1; i <= n; i++) if (d[i] != "") dep[substr(d[i], length(root) + 1)] = 1
		}
		{
			dir = $0
			while (sub(/\/[^\/]*$/, "", dir)) {
				if (dir in pkg) { if (dir in dep) print; next }
			}
			print
		}'
}

pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(pkg/vllm pkg/query pkg/interval pkg/frames pkg/health pkg/models)
fi
out="${MUTATION_OUT:-}"
if [ -z "$out" ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
workers="${MUTATION_WORKERS:-1}"
limit="${MUTATION_TIMEOUT:-1800}"
niceness="${MUTATION_NICE:-10}"
coefficient="${MUTATION_TIMEOUT_COEFFICIENT:-5}"

reports=()
for p in "${pkgs[@]}"; do
	p="${p#./}"
	p="${p%/}"
	name=$(echo "$p" | tr '/' '_')
	key=""
	if [ "${MUTATION_CACHE:-on}" != off ] && key=$(input_key "$p") && [ -s "$results/$key.json" ]; then
		cp "$results/$key.json" "$out/$name.json"
		echo "==> $p: mutation report reused from $results/$key.json (made $(date -u -r "$results/$key.json" '+%Y-%m-%d %H:%M UTC') from these exact inputs; MUTATION_CACHE=off runs it again)"
		reports+=("$p=$out/$name.json")
		continue
	fi
	echo "==> mutating $p (workers $workers, at most ${limit}s)"
	# --timeout-coefficient: the unit tests of a mutant may take several times
	# the coverage run on a busy machine before the mutant counts as timed out.
	# -vet=off: each mutant is one go test; vet adds nothing the compiler and
	# the tests do not, and costs a second pass over every package.
	# -ldflags=-w: linking the test binary is most of a mutant's cost, and
	# leaving out DWARF (which no mutant run reads) cuts it by about a third.
	# --tags: gremlins' -tags replaces any in GOFLAGS, so the release tags
	# (GO_RELEASE_TAGS, set by scripts/test.sh) are passed again with it, and
	# the mutants' builds share the tests' compiled packages.
	if ! GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off -ldflags=-w" timeout "$limit" nice -n "$niceness" "$gremlins" unleash --silent \
		--tags "mutation${GO_RELEASE_TAGS:+,$GO_RELEASE_TAGS}" --workers "$workers" \
		--timeout-coefficient "$coefficient" --output "$out/$name.json" "./$p"; then
		echo "gremlins failed or ran past ${limit}s on $p" >&2
		exit 1
	fi
	if [ -n "$key" ]; then
		mkdir -p "$results"
		cp "$out/$name.json" "$results/$key.json.tmp.$$" && mv "$results/$key.json.tmp.$$" "$results/$key.json"
		# Keep the newest few reports per package; older inputs do not come back.
		ls -t "$results"/*.json 2>/dev/null | tail -n +25 | xargs -r rm -f
	fi
	reports+=("$p=$out/$name.json")
done

go run ./scripts/mutationscore -equivalent scripts/mutation-equivalent.txt \
	-threshold "${MUTATION_THRESHOLD:-90}" "${reports[@]}"
