# syntax=docker/dockerfile:1
# The uptime-operator image: one static binary (manager, probe agent, MCP
# server, dev environment and key management) on a distroless base.
#
#   docker build -t uptime-operator:dev --build-arg VERSION=v0.1.0 .
#
# The Helm chart runs it as UID 65532 with a read-only root filesystem.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false

# Dependencies first, so source changes reuse the module cache layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

COPY . .
# CGO_ENABLED=0: the SQLite driver (modernc.org/sqlite) is pure Go, so the
# binary is fully static and needs no libc in the final image.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH:-amd64} \
    go build -trimpath \
      -ldflags "-s -w -X github.com/uptime-operator/uptime-operator/internal/cli.Version=${VERSION}" \
      -o /out/uptime-operator .

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="uptime-operator" \
      org.opencontainers.image.description="Self-hosted uptime monitoring as a Kubernetes operator" \
      org.opencontainers.image.source="https://github.com/uptime-operator/uptime-operator"
COPY --from=builder /out/uptime-operator /uptime-operator
USER 65532:65532
ENTRYPOINT ["/uptime-operator"]
CMD ["manager"]
