# credencial: a minimal two-stage image. The build stage compiles the release
# binary; the runtime stage is Debian slim with the binary, the CA store
# (upstream TLS trusts the operating system's store) and curl for the
# health check, running as an unprivileged user.
#
#   docker build -t credencial .
#   docker run --rm --env-file credencial.env credencial migrate   # first, and after each upgrade
#   docker run -d -p 8000:8000 --env-file credencial.env credencial
#
# Settings come from the environment (SERVICE_*, DATABASE_URL; see
# credencial.toml.example). The health check assumes the default port 8000.

FROM rust:1.92-slim-bookworm AS build
# make: jemalloc's build (the service's allocator).
RUN apt-get update \
 && apt-get install -y --no-install-recommends make \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin credencial

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin credencial
COPY --from=build /src/target/release/credencial /usr/local/bin/credencial
USER credencial:credencial
ENV SERVICE_BIND=0.0.0.0:8000 \
    SERVICE_LOG_FORMAT=json
EXPOSE 8000
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8000/healthz"]
ENTRYPOINT ["/usr/local/bin/credencial"]
CMD ["serve"]
