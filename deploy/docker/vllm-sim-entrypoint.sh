#!/bin/sh
# Starts vllm-sim with the flags in deploy/vllm-sim.flags, the same file
# scripts/demo.sh uses, so the compose stack and the demo simulate the same
# fleet. Only where and how it listens is added here:
#   VLLM_SIM_FLAGS_FILE    the flags file (compose mounts deploy/vllm-sim.flags here)
#   VLLM_SIM_TARGETS_FILE  file_sd targets for Prometheus (a volume shared with it)
#   VLLM_SIM_LISTEN        host to listen on (0.0.0.0: reachable from other containers)
#   VLLM_SIM_BASE_PORT     port of instance 0; the others follow (8000, 8001, ...)
#   VLLM_SIM_ADVERTISE_HOST  host written into the targets file instead of the
#                          listen address (compose: the service name vllm-sim)
# Extra arguments are passed on to vllm-sim after these and override them.
set -eu

flags_file=${VLLM_SIM_FLAGS_FILE:-/etc/vllm-sim/vllm-sim.flags}
targets_file=${VLLM_SIM_TARGETS_FILE:-/targets/vllm.json}
listen=${VLLM_SIM_LISTEN:-0.0.0.0}
base_port=${VLLM_SIM_BASE_PORT:-8000}
advertise=${VLLM_SIM_ADVERTISE_HOST:-}

if [ ! -r "$flags_file" ]; then
	echo "vllm-sim-entrypoint: cannot read the flags file $flags_file (mount deploy/vllm-sim.flags there)" >&2
	exit 2
fi
# A targets file left by an earlier run would mark the service healthy before
# this fleet listens.
mkdir -p "$(dirname "$targets_file")"
rm -f "$targets_file"

# One flag or value per word, lines starting with # ignored: exactly how
# scripts/demo.sh reads the file.
# shellcheck disable=SC2046
if [ -n "$advertise" ]; then
	set -- --advertise-host "$advertise" "$@"
fi
set -- $(grep -v '^#' "$flags_file") \
	--listen "$listen" --base-port "$base_port" --targets-file "$targets_file" "$@"
exec vllm-sim "$@"
