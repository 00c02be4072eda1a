#!/usr/bin/env bash
# Side-by-side benchmark of the plugin against raw Prometheus at fleet scale.
#
# Builds the plugin binary, writes N vLLM engines' history as OpenMetrics and
# backfills a real Prometheus with `promtool tsdb create-blocks-from
# openmetrics`, then runs each query type through the plugin over gRPC (as
# Grafana does, pkg/internal/grafanahost) and the same PromQL over raw HTTP,
# interleaved, plus a many-caller load of one dashboard; prints one table of
# medians and ratios (pkg/internal/fleetbench). Nothing here asserts a time.
#
#   bash scripts/bench.sh                  # 1,000 engines, 1 h at 5 s, 200 callers for 60 s
#   bash scripts/bench.sh --engines 5000   # a bigger fleet
#   bash scripts/bench.sh --short          # small and quick (scripts/test.sh runs this)
#
# Then the fleet table (the fleet query type) at each size of --fleet-table
# (default 1000,10000; --short: 10), the shipped rules' series backfilled too:
# recordingRules on, off, and the rules-off expressions as raw HTTP, interleaved;
# then each plan's expressions alone with Prometheus' own stats (the profile).
#
# Then the recording rules (TestRulesBench): the same fleet at the scrape
# interval 15s, the shipped rules' series backfilled over it (`promtool tsdb
# create-blocks-from rules`), and waitTime, queue and top-k by wait p99 run
# with recordingRules on, off, and as raw HTTP, interleaved at a 30s step;
# then the crowd with rules on and off. --no-rules skips it; --only-rules
# runs only it (with --engines, --span, --reps, --callers, --load, --out).
set -euo pipefail
cd "$(dirname "$0")/.."

engines=1000 span=1h reps=5 callers=200 load=60s out="" fleet_table=1000,10000 rules=1 only_rules=0
usage() {
	sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
	echo "options: --engines N  --span 1h  --reps 5  --callers 200  --load 60s  --out FILE  --fleet-table 1000,10000  --no-rules  --only-rules  --short"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--engines) engines=$2; shift 2 ;;
	--span) span=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--callers) callers=$2; shift 2 ;;
	--load) load=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--fleet-table) fleet_table=$2; shift 2 ;;
	--no-rules) rules=0; shift ;;
	--only-rules) only_rules=1; shift ;;
	--short) engines=10 span=10m reps=2 callers=4 load=2s fleet_table=10; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
	esac
done

for tool in go prometheus promtool; do
	command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/test.sh once (it installs Debian's prometheus package)" >&2; exit 1; }
done

echo "==> $(nproc) CPUs, $(prometheus --version 2>&1 | head -1)"
# Unit tests of the bench's own reading and arithmetic: Prometheus' stats
# (error paths too), the profile's table, the memory bound.
go test -count=1 -run '^(TestInstantStats|TestRenderProfile|TestMemoryCells)$' ./pkg/internal/fleetbench/
echo "==> $engines engines, range $span, $reps runs per case, load of $callers callers for $load"
args=(-bench.engines="$engines" -bench.span="$span" -bench.reps="$reps" -bench.callers="$callers" -bench.load="$load")
[ -n "$out" ] && args+=(-bench.out="$(realpath -m "$out")")
if [ "$only_rules" = 0 ]; then
	go test -count=1 -timeout 3h -run '^TestFleetBench$' -v ./pkg/internal/fleetbench/ -args "${args[@]}"

	IFS=, read -ra sizes <<<"$fleet_table"
	for n in "${sizes[@]}"; do
		echo "==> fleet table, $n engines"
		# The rules are found at the wall clock's now, so the history runs past
		# the start by more than the setup takes (minutes at 10,000 engines).
		ahead=10m
		[ "$n" -ge 5000 ] && ahead=30m
		go test -count=1 -timeout 1h -run '^TestFleetTableBench$' -v ./pkg/internal/fleetbench/ -args -bench.fleet.engines="$n" -bench.fleet.reps="$reps" -bench.fleet.ahead="$ahead" |
			grep -E '^\| |^\|---|^(rules (on|off)|joined), |^ +fleet(table|profile)_test\.go:|^\s+Messages:|^(--- |ok|FAIL)'
	done
fi

if [ "$rules" = 1 ]; then
	# The table goes to FILE-rules.md beside --out's FILE.
	echo "==> recording rules: on, off and raw, $engines engines"
	go test -count=1 -timeout 3h -run '^TestRulesBench$' -v ./pkg/internal/fleetbench/ -args "${args[@]}"
fi
