// Package deploytest checks what ships under deploy/ and the compose stack
// at the repository root against the tools that will run them:
//
//   - the Prometheus configs and the vLLM recording and alerting rules with
//     promtool (check config, check rules, test rules), including that the
//     rule unit tests fail when an alert is broken on purpose;
//   - the rules evaluated by a real Prometheus on the simulated fleet, started
//     by the same entrypoint and flags file as the compose stack;
//   - the KServe variants of the rules (deploy/*/kserve/): generated from
//     the plain files by cmd/kserverules, reading only kserve_vllm: names,
//     and unit-tested on KServe's series;
//   - the Alertmanager routing example;
//   - the node agent's systemd unit with systemd-analyze verify, and that
//     its device sandbox leaves the NVIDIA devices open;
//   - docker-compose.yaml: mounts, the simulator's flags file, Grafana's
//     plugin and provisioning mounts, and that the compose Prometheus config
//     stays in step with the tested one.
//
// Docker is not needed: the compose file is checked as YAML, and its pieces
// (entrypoint, configs, rules) are run here with the local binaries.
// Everything in this package is tests; it has no code of its own.
package deploytest
