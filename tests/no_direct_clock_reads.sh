#!/usr/bin/env bash
# Time is read in one place, src/common/clock.{h,cc} (Clock, RealClock, MonotonicNs,
# SteadyNow): decisions take a Clock so tests can move time, and plumbing goes through
# the same functions. Fails, listing them, on reads of the system's clocks anywhere else
# in src/ (tests and test utilities aside).
#   tests/no_direct_clock_reads.sh [SOURCE_DIR]
set -u
src=${1:-$(dirname "$0")/..}/src
hits=$(grep -rnE '(steady_clock|system_clock|high_resolution_clock)::now|gettimeofday *\(|clock_gettime *\( *CLOCK_(REALTIME|MONOTONIC|BOOTTIME|TAI)|[^a-z_:.]time *\( *(nullptr|NULL|0) *\)' \
  "$src" --include='*.cc' --include='*.h' \
  | grep -vE '_test\.cc:|test_util[^/]*:|/common/clock\.(h|cc):')
if [ -n "$hits" ]; then
  echo "reads of the system clock outside src/common/clock (use Clock, MonotonicNs or SteadyNow):"
  echo "$hits"
  exit 1
fi
echo "no direct clock reads outside src/common/clock"
