#!/usr/bin/env bash
# Sanitizer builds, each in its own build directory (clang; ccache shared with the others):
#
#   test/sanitize.sh asan   build-asan: every target with ASan+UBSan and the libFuzzer targets;
#                           runs every unit test and replays each fuzz seed corpus (ctest).
#   test/sanitize.sh tsan   build-tsan: TSan; runs the agent pipeline, storage and faults tests.
#
# Suppressions, and why each one is there: test/sanitizers/*.supp.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
supp=$repo/test/sanitizers
jobs=${NODEHOOK_JOBS:-2}

configure_and_build() {  # DIR CMAKE_ARGS... -- NINJA_TARGETS...
  local dir=$1
  shift
  local args=() targets=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  targets=("$@")
  cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${args[@]}" >/dev/null
  ninja -C "$dir" -j "$jobs" "${targets[@]}"
}

case "${1:-}" in
  asan)
    dir=${NODEHOOK_ASAN_BUILD_DIR:-$repo/build-asan}
    configure_and_build "$dir" -DNODEHOOK_SANITIZE=address,undefined -DNODEHOOK_FUZZ=ON
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp
    export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
    asan=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    # The tests that open TLS connections through libcpprest get full unwinding for allocation
    # stacks: libcrypto has no frame pointers, so the fast unwinder stops there and a block that
    # libcpprest allocated through OpenSSL loses the libcpprest frame its suppression (lsan.supp)
    # matches on. The others keep the fast unwinder: full unwinding on every malloc made
    # rollout_test (2,000 node-Lease writes of up to 200 KiB) take 9 minutes instead of 1.5.
    tls='^(kube_transport|kube_credentials)_test$'
    (cd "$dir" && ASAN_OPTIONS=$asan:fast_unwind_on_malloc=0 ctest --output-on-failure -j "$jobs" -R "$tls")
    (cd "$dir" && ASAN_OPTIONS=$asan ctest --output-on-failure -j "$jobs" -E "$tls")
    ;;
  tsan)
    dir=${NODEHOOK_TSAN_BUILD_DIR:-$repo/build-tsan}
    configure_and_build "$dir" -DNODEHOOK_SANITIZE=thread -- object_test queue_test hooks_test events_test watch_test targeting_test finalizers_test election_test reconcile_test periodic_test pipeline_test storage_test faults_test
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp
    (cd "$dir" && ctest --output-on-failure -j "$jobs" -R '^(object|queue|hooks|events|watch|targeting|finalizers|election|reconcile|periodic|pipeline|storage|faults)_test$')
    ;;
  *)
    sed -n '2,8p' "$0" >&2
    exit 2
    ;;
esac
