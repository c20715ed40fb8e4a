# nodehook image. The build steps mirror test/build.sh, which CI runs on every change.
FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config libssl-dev \
      libcpprest-dev rapidjson-dev libsqlite3-dev libcli11-dev catch2 \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNODEHOOK_BUILD_TESTS=OFF \
 && ninja -C /build -j2 nodehook

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcpprest2.10 libsqlite3-0 libssl3 ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/agent/app/nodehook /usr/local/bin/nodehook
COPY config/hooks /etc/nodehook/hooks
# tini as PID 1 reaps every orphan and forwards signals; nodehook reaps what hooks leave behind
# itself too (a child subreaper), so it is also safe when run as PID 1 without tini.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/nodehook"]
CMD ["run", "--config", "/etc/nodehook/config.json"]
