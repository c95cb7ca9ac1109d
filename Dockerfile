# syntax=docker/dockerfile:1
# The MiniCluster composition function (and, with --target provider, the
# burst controller once it exists): static Go binaries on a distroless base.

FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/function ./cmd/function

FROM gcr.io/distroless/static-debian12:nonroot AS function
COPY --from=build /out/function /function
EXPOSE 9443
USER 65532:65532
ENTRYPOINT ["/function"]
