#!/bin/bash
# Replays the Philly windows of docs/benchmarks.md ("Every week of the file and four
# shifted windows") at offered load 0.9 and 1.2 under every policy, two replays at
# a time. Usage: bench/sched_quality.sh [BUILD_DIR] [TRACE]
set -euo pipefail
build=${1:-build}
trace=${2:-$(dirname "$0")/../traces/philly-2017-10-01_to_10-22.csv}
rota="$build/bin/rota"
[[ -x $rota ]] || { echo "no $rota: build first" >&2; exit 1; }
[[ -r $trace ]] || { echo "cannot read the trace $trace" >&2; exit 1; }
windows=(2017-10-02/2017-10-09 2017-10-09/2017-10-16 2017-10-16/2017-10-22
         2017-10-01/2017-10-08 2017-10-05/2017-10-12 2017-10-12/2017-10-19 2017-10-15/2017-10-22)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in "${windows[@]}"; do
  from=${w%/*} to=${w#*/}
  pids=()
  for load in 0.9 1.2; do
    "$rota" simulate --trace "$trace" --from "$from" --to "$to" --load "$load" >"$tmp/$load" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  for load in 0.9 1.2; do
    echo "== $from .. $to, load $load"
    cat "$tmp/$load"
  done
done
