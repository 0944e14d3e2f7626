# syntax=docker/dockerfile:1
# Build: docker build -t gateway .
# Run:   docker run --rm -p 127.0.0.1:8080:8080 -p 127.0.0.1:9090:9090 gateway

FROM swift:6.3-bookworm AS build
WORKDIR /src
# Resolve dependencies first so they are cached between source changes.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
# Release on Linux links with the toolchain's lld, packed relative relocations and
# no exported symbols (Package.swift, releaseLinkerSettings): needs the runtime's glibc 2.36.
RUN swift build -c release --product gateway --static-swift-stdlib \
    && mkdir -p /out \
    && cp "$(swift build -c release --show-bin-path)/gateway" /out/gateway

# scripts/image-check.sh runs this stage's RUN, COPY, USER, WORKDIR, ENV and
# HEALTHCHECK as written here, in a debootstrap root filesystem (no Docker engine needed).
FROM debian:bookworm-slim
# The user and its group are both 10001 (a bare `useradd --system` would take a
# group from the system range); the state directory holds the CA key and tokens:
# 0700, owned by the user, no skeleton files (no --create-home).
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid 10001 --no-log-init --no-create-home \
        --home-dir /var/lib/gateway --shell /usr/sbin/nologin gateway \
    && install -d -m 0700 -o 10001 -g 10001 /var/lib/gateway
COPY --from=build /out/gateway /usr/local/bin/gateway
COPY config/docker.yaml /etc/gateway/gateway.yaml
USER gateway
WORKDIR /var/lib/gateway
ENV GATEWAY_CONFIG=/etc/gateway/gateway.yaml
EXPOSE 8080 9090
# /readyz, not /healthz: it fails when the proxy port does not accept and answer.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD curl -fsS http://127.0.0.1:9090/readyz || exit 1
ENTRYPOINT ["/usr/local/bin/gateway"]
CMD ["run"]
