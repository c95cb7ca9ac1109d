# syntax=docker/dockerfile:1
# The MiniCluster composition function (default target) and the burst
# controller (--target provider): static Go binaries on a distroless base.
# Without a Docker engine, `make packages` builds the same images in Go
# (hack/packages/dockerfile_test.go keeps the two in step).

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# The version the function stamps on what it composes (function/version.go),
# e.g. --build-arg VERSION=v0.1.0 as make packages VERSION=v0.1.0.
ARG VERSION=
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w -X github.com/flux-framework/minicluster-crossplane/function.Version=${VERSION}" -o /out/function ./cmd/function && \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/provider ./cmd/provider

FROM gcr.io/distroless/static-debian12:nonroot AS provider
COPY --from=build /out/provider /provider
EXPOSE 8080
USER 65532:65532
ENTRYPOINT ["/provider"]

FROM gcr.io/distroless/static-debian12:nonroot AS function
COPY --from=build /out/function /function
EXPOSE 9443
USER 65532:65532
ENTRYPOINT ["/function"]
