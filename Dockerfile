# LiveDelta's image: built on the official Swift image, run on a slim Debian with only the
# runtime libraries the binary needs, as a non-root user.
#
#   docker build -t livedelta .
#   docker run --rm -p 8080:8080 livedelta
#
# Package versions are pinned to Debian 12 (bookworm), the base of both stages; bump them
# together with the images.

# Fully qualified: podman and other tools without registry aliases refuse short names.
FROM docker.io/library/swift:6.2-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd-dev=0.9.75-6 libhiredis-dev=0.14.1-3 libcurl4-openssl-dev=7.88.1-10+deb12u15 \
        libpq-dev=15.18-0+deb12u1 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The Swift runtime is linked in: the run stage needs no Swift.
RUN swift build -c release --product livedelta --static-swift-stdlib \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/livedelta" /out/livedelta

FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12=0.9.75-6 libhiredis0.14=0.14.1-3 libcurl4=7.88.1-10+deb12u15 libpq5=15.18-0+deb12u1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin livedelta
COPY --from=build /out/livedelta /usr/local/bin/livedelta
USER 10001
ENV LIVEDELTA_HOST=0.0.0.0 \
    LIVEDELTA_PORT=8080
EXPOSE 8080
STOPSIGNAL SIGTERM
# Liveness: the process serves. Readiness (the session store answers) is `healthcheck --ready`,
# GET /ready, for an orchestrator's readiness probe: restarting LiveDelta cannot bring Redis back.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["livedelta", "healthcheck"]
ENTRYPOINT ["livedelta"]
CMD ["serve"]
