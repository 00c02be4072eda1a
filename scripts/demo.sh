#!/usr/bin/env bash
# The demo stack without Docker: builds the plugin, starts the simulated vLLM
# fleet (deploy/vllm-sim.flags: 8 engines on 4 instances, one hot, bursts)
# and a real Prometheus scraping it (deploy/prometheus/prometheus.yml), and
# prints how to point Grafana at both. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PROM_PORT=${PROM_PORT:-9090}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

if ! command -v prometheus >/dev/null; then
	sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends prometheus
fi
echo "==> building the plugin (backend and frontend) into dist/"
go run github.com/magefile/mage -v build:linux
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build

echo "==> starting vllm-sim"
mkdir -p "$work/prometheus/targets"
go build -o "$work/vllm-sim" ./cmd/vllm-sim
# shellcheck disable=SC2046
"$work/vllm-sim" $(grep -v '^#' deploy/vllm-sim.flags) --targets-file "$work/prometheus/targets/vllm.json" &
cp -r deploy/prometheus/prometheus.yml deploy/prometheus/rules "$work/prometheus/"
until [ -s "$work/prometheus/targets/vllm.json" ]; do sleep 0.2; done

# The host under the fleet: Debian's node exporter, scraped as 127.0.0.1 like
# the simulated instances, so the host query joins it to them.
NODE_PORT=${NODE_PORT:-9100}
if command -v prometheus-node-exporter >/dev/null; then
	echo "==> starting prometheus-node-exporter on 127.0.0.1:$NODE_PORT"
	prometheus-node-exporter --web.listen-address="127.0.0.1:$NODE_PORT" --collector.disable-defaults \
		--collector.cpu --collector.meminfo --collector.netdev --collector.diskstats --collector.loadavg --collector.pressure &
	echo "[{\"targets\": [\"127.0.0.1:$NODE_PORT\"]}]" >"$work/prometheus/targets/node.json"
else
	echo "prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter): host panels stay empty" >&2
	echo "[]" >"$work/prometheus/targets/node.json"
fi

echo "==> starting Prometheus on 127.0.0.1:$PROM_PORT"
prometheus --config.file="$work/prometheus/prometheus.yml" --storage.tsdb.path="$work/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn &

cat <<MSG

Demo running. Prometheus: http://127.0.0.1:$PROM_PORT (try vllm:num_requests_waiting).
Load the plugin into a Grafana 12 on this machine:
  ln -s $(pwd)/dist <grafana plugins folder>/inferops-vllm-datasource
  GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS=inferops-vllm-datasource grafana server
then add a "vLLM" data source with URL http://127.0.0.1:$PROM_PORT and press Save & test.
Ctrl-C stops the fleet and Prometheus.
MSG
wait
