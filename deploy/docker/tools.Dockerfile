# syntax=docker/dockerfile:1
# vllm-sim (the simulated vLLM fleet) and vllm-node-agent (GPU data; with
# --simulate N it needs no GPU) for docker-compose.yaml. The node agent links
# go-nvml with cgo, so it is built on Debian bookworm and runs on bookworm:
# the same glibc at build and run time.
#
#   docker build -f deploy/docker/tools.Dockerfile --target tools -t inferops-vllm-tools:0.6.0 .
#
# The Kubernetes DaemonSet (deploy/kubernetes/node-agent-daemonset.yaml) runs this image's vllm-node-agent:
# tag it with the release and push it to your registry.
#
# Build context: the repository root (see .dockerignore).

ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=1 CGO_CFLAGS="-O2 -Wno-deprecated-declarations"
RUN go build -trimpath -o /out/vllm-sim ./cmd/vllm-sim \
 && go build -trimpath -o /out/vllm-node-agent ./cmd/vllm-node-agent

FROM debian:bookworm-slim AS tools
COPY --from=build /out/vllm-sim /out/vllm-node-agent /usr/local/bin/
COPY deploy/docker/vllm-sim-entrypoint.sh /usr/local/bin/vllm-sim-entrypoint
# /targets is where vllm-sim writes its file_sd targets; a new named volume
# mounted there takes this folder's owner, so the non-root user can write it.
RUN chmod 0755 /usr/local/bin/vllm-sim-entrypoint \
 && mkdir -p /targets && chown 65532:65532 /targets
USER 65532:65532
# No default command: docker-compose.yaml runs vllm-sim-entrypoint or
# vllm-node-agent.
