#!/usr/bin/env bash
# The libFuzzer targets of test/fuzz, built by test/sanitize.sh into build-asan.
#
#   test/fuzz/run.sh --replay FUZZER CORPUS_DIR
#       Runs FUZZER once over every file in CORPUS_DIR (what ctest and CI do). Pass/fail does
#       not depend on time: it fails only if an input crashes, leaks or trips a sanitizer.
#   test/fuzz/run.sh --long SECONDS [TARGET...]
#       Fuzzes each target (default: all) for SECONDS, two at a time, starting from its seed
#       corpus. New inputs go to $BUILD/fuzz/TARGET/corpus (the checked-in seeds are never
#       written); a crash is saved as $BUILD/fuzz/TARGET/crash-*: copy it into
#       test/fuzz/corpus/TARGET/ (so the replay keeps it as a regression test) and fix the code.
#       Prints the executions per target.
# BUILD is $NODEHOOK_ASAN_BUILD_DIR or build-asan.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${NODEHOOK_ASAN_BUILD_DIR:-$repo/build-asan}
targets=(watch_stream_fuzzer http_request_fuzzer kubeconfig_fuzzer config_fuzzer hook_result_fuzzer calendar_fuzzer)

# Leak checking stays on; UBSan reports are fatal unless test/sanitizers/ubsan.supp lists them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:suppressions=$repo/test/sanitizers/ubsan.supp}

case "${1:-}" in
  --replay)
    fuzzer=$2 corpus=$3
    shopt -s nullglob
    inputs=("$corpus"/*)
    [ ${#inputs[@]} -gt 0 ] || { echo "run.sh: no seeds in $corpus" >&2; exit 1; }
    # Files (not the directory) as arguments: each runs once and nothing is written back.
    exec "$fuzzer" -rss_limit_mb=2048 "${inputs[@]}"
    ;;
  --long)
    seconds=$2
    shift 2
    [ $# -gt 0 ] && targets=("$@")
    fuzz_one() {
      local target=$1 work=$build/fuzz/$1
      mkdir -p "$work/corpus"
      "$build/test/fuzz/$target" "$work/corpus" "$here/corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/" >"$work/log" 2>&1 || true
      local execs crashes
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
      crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
                  -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
      echo "$target: ${execs:-?} executions in ${seconds}s, $crashes finding(s) (log: $work/log)"
    }
    running=0
    for t in "${targets[@]}"; do
      fuzz_one "$t" &
      running=$((running + 1))
      if [ "$running" -ge 2 ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    ! compgen -G "$build/fuzz/*/crash-*" >/dev/null && ! compgen -G "$build/fuzz/*/leak-*" >/dev/null
    ;;
  *)
    sed -n '2,17p' "$0" >&2
    exit 2
    ;;
esac
