# syntax=docker/dockerfile:1
# Grafana with this plugin inside, for clusters that cannot download at pod start (docs/install.md, Without
# internet access). Build it where you can reach the release, from a folder holding the unzipped archive:
#
#   sha256sum -c inferops-vllm-datasource-0.6.0.zip.sha256
#   unzip inferops-vllm-datasource-0.6.0.zip          # creates inferops-vllm-datasource/
#   docker build -f grafana-airgapped.Dockerfile -t <registry>/grafana-vllm:13.2.0-0.6.0 .
#   docker push <registry>/grafana-vllm:13.2.0-0.6.0
#
# The plugin goes to /opt/grafana-plugins, outside /var/lib/grafana, which the Helm chart and most setups cover
# with a volume (a plugin copied under it would be hidden). The archive also holds the three dashboards
# (inferops-vllm-datasource/dashboards/), which deploy/helm/grafana-values-airgapped.yaml provisions from there.
# pkg/deploytest/airgapped_test.go checks this file against the values file and the release.
ARG GRAFANA_VERSION=13.2.0
FROM grafana/grafana:${GRAFANA_VERSION}
COPY --chown=472:0 inferops-vllm-datasource /opt/grafana-plugins/inferops-vllm-datasource
ENV GF_PATHS_PLUGINS=/opt/grafana-plugins \
    GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS=inferops-vllm-datasource
