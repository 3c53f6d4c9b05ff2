#!/usr/bin/env bash
# run_fuzz.sh BINARY CORPUS_DIR ARTIFACT_DIR SECONDS [LIBFUZZER_ARGS...]
# Runs one libFuzzer target for SECONDS from a copy of the committed corpus (the run adds
# inputs to the copy, never to fuzz/corpus/). Exits non-zero on a crash (ASan, UBSan, an
# uncaught exception, an abort), a leak, an input taking more than 10 s, or more than
# 2 GB of memory; the input is written to ARTIFACT_DIR and named in the output.
#   ROTA_FUZZ_JOBS=N  fork N workers (a longer run by hand; docs/benchmarks.md)
set -euo pipefail
bin=$1 corpus=$2 artifacts=$3 seconds=$4
shift 4
work=$(mktemp -d "${TMPDIR:-/tmp}/rota-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
cp -r "$corpus"/. "$work/corpus/"
fork=()
[ -z "${ROTA_FUZZ_JOBS:-}" ] || fork=(-fork="$ROTA_FUZZ_JOBS")
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${fork[@]}" "$@" "$work/corpus"
