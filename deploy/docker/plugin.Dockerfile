# syntax=docker/dockerfile:1
# The vLLM data source plugin, built from source: the Go backend with the
# plugin SDK's mage target (as scripts/test.sh does) and the frontend with
# webpack, merged into one dist/ folder. The final image only holds that folder
# at /plugin; docker-compose.yaml's plugin-build service copies it into the
# named volume that Grafana mounts as its plugin folder.
#
#   docker build -f deploy/docker/plugin.Dockerfile -t inferops-vllm-datasource-plugin .
#
# Build context: the repository root (see .dockerignore).

ARG GO_IMAGE=golang:1.26-bookworm
ARG NODE_IMAGE=node:20-bookworm

# --- backend: dist/gpx_vllm_linux_<arch> and dist/go_plugin_build_manifest
FROM ${GO_IMAGE} AS backend
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# TARGETARCH is set by BuildKit; Grafana runs the executable for its own
# architecture, so build the one the image is built for.
ARG TARGETARCH
RUN case "${TARGETARCH:-amd64}" in \
      amd64) target=build:linux ;; \
      arm64) target=build:linuxARM64 ;; \
      *) echo "unsupported architecture ${TARGETARCH}: build the plugin with mage yourself" >&2; exit 1 ;; \
    esac \
 && go run github.com/magefile/mage -v "$target" \
 && ls -l dist/

# --- frontend: dist/module.js, plugin.json, img/, README ...
FROM ${NODE_IMAGE} AS frontend
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# --- the plugin folder, and a command that installs it into /out
FROM busybox:1.36 AS plugin
COPY --from=frontend /src/dist/ /plugin/
COPY --from=backend /src/dist/ /plugin/
RUN test -f /plugin/plugin.json && test -f /plugin/module.js && ls /plugin/gpx_vllm_linux_* >/dev/null
# Replace whatever an earlier build left in the volume.
CMD ["sh", "-c", "rm -rf /out/* && cp -a /plugin/. /out/ && ls -l /out"]
