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
    # Full unwinding for allocation stacks: libcrypto has no frame pointers, so the fast unwinder
    # stops there and a block that libcpprest allocated through OpenSSL loses the libcpprest frame
    # its suppression (lsan.supp) matches on.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:fast_unwind_on_malloc=0
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp
    export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
    (cd "$dir" && ctest --output-on-failure -j "$jobs")
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
