# nodehook image. The build steps mirror test/build.sh, which CI runs on every change; the
# runtime stage runs deploy/image/install-runtime.sh (packages from runtime-packages.txt), as the
# image test (test/e2e/test_image.py) does in its root filesystem.
#   docker build -t nodehook:0.1.0 .                          # or --build-arg BASE=... for a mirror
ARG BASE=debian:bookworm-slim
ARG BUILD_BASE=debian:bookworm

FROM ${BUILD_BASE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config libssl-dev \
      libcpprest-dev rapidjson-dev libsqlite3-dev libcli11-dev libyaml-cpp-dev libjemalloc-dev ccache \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
# A compiler cache mounted at /ccache (test/image/build-image.sh mounts one; `docker build`
# has none) makes a rebuild after a small change cheap; without it ccache starts empty.
# Release, not RelWithDebInfo as test/build.sh: the binary is stripped, so debug info would only
# cost build time.
RUN if [ -d /ccache ]; then export CCACHE_DIR=/ccache; fi \
 && cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNODEHOOK_BUILD_TESTS=OFF \
 && ninja -C /build -j2 nodehook \
 && strip --strip-unneeded -o /nodehook /build/agent/app/nodehook

FROM ${BASE}
COPY deploy/image/ /tmp/image/
RUN /tmp/image/install-runtime.sh && rm -rf /tmp/image
COPY --from=build /nodehook /usr/local/bin/nodehook
# Hooks are not part of the image: they come from a ConfigMap or a hostPath (deploy/, docs/install.md).
USER 65532:65532
# tini as PID 1 reaps every orphan and forwards signals; nodehook reaps what hooks leave behind
# itself too (a child subreaper), so it is also safe when run as PID 1 without tini.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/nodehook"]
CMD ["run", "--config", "/etc/nodehook/config/config.json"]
