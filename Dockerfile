# syntax=docker/dockerfile:1
# Builds the lokivl binary in a full Rust image and ships it in a slim one.
# Used by compose/docker-compose.yml; build from the repository root:
#   docker build -t lokivl .

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# The whole workspace is needed: cargo reads every member's manifest.
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY benches benches
# Cache mounts keep the registry and target dir between builds; the binary is
# copied out because the target mount is not part of the image layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p proxy --bin lokivl \
    && cp target/release/lokivl /usr/local/bin/lokivl

FROM debian:bookworm-slim
COPY --from=build /usr/local/bin/lokivl /usr/local/bin/lokivl
ENV LOKIVL_LISTEN=0.0.0.0:3100
EXPOSE 3100
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/lokivl"]
