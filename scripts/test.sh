#!/usr/bin/env bash
# Installs what is missing, builds rota and runs the whole test suite three times:
# a RelWithDebInfo build (GCC); an AddressSanitizer + UndefinedBehaviorSanitizer
# build (GCC); a ThreadSanitizer build with Clang, which also checks the lock
# annotations (-Wthread-safety -Werror, see src/common/mutex.h) on everything,
# benchmarks included. A fourth configuration, fuzz, builds only the libFuzzer
# targets of fuzz/ (Clang, -fsanitize=fuzzer,address,undefined; build-fuzz) and
# runs each for ROTA_FUZZ_SECONDS (30) from the committed corpus (ctest label
# `fuzz`; docs/testing.md): about 5 minutes on two cores. Exits non-zero if any
# test fails, if ThreadSanitizer reports anything in any process, if a fuzz
# target crashes, leaks or hangs, or if a test left processes running.
#   ROTA_TEST_CONFIGS="release"  run only some configurations (release sanitize tsan fuzz)
#   CTEST_ARGS="-L unit"          pass extra arguments to ctest
#   ROTA_FUZZ_SECONDS=600         how long the fuzz configuration runs each target
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
JOBS=${JOBS:-$(nproc)}
# Debian's PyTorch was installed above: its end-to-end test must run, not skip.
export ROTA_REQUIRE_TORCH=1
# ... and Debian's Chromium: the web UI's browser tests must run, not skip.
export ROTA_REQUIRE_BROWSER=1
# As root (CI), tests that need root (Unix users, setuid, signals across users) and
# OpenSSH's sshd (installed above) must run: a skip would hide them.
if [ "$(id -u)" -eq 0 ]; then
  export ROTA_REQUIRE_ROOT_TESTS=1
  export ROTA_REQUIRE_SSHD=1
fi
# ... and PostgreSQL's server programs: the store tests run on PostgreSQL too (they start
# a server of their own, as root under the postgres user), never skipped.
export ROTA_REQUIRE_POSTGRES=1
CONFIGS=${ROTA_TEST_CONFIGS:-"release sanitize tsan fuzz"}

# Under the sanitizers, tests matching this are not run: the Philly trace replays
# (congested and reference rows: single-threaded arithmetic, 30 s to minutes each
# there, nothing ReplayTest and the scheduler's unit tests do not cover under the
# sanitizers); and the PostgreSQL failover (a pg_auto_failover formation, 30 s of
# waiting on PostgreSQL: the store code it reaches runs under the sanitizers in the
# store tests); and the HA tests under load (HaLoadE2E: 200 agents failing over, 50
# crash/restart cycles timed for a release build; the failover code they reach runs under
# the sanitizers in HaE2E); and rota top against 100 simulated nodes (rota dev takes more
# than a minute to bring 100 nodes up there; the same rota top code runs under the
# sanitizers at 3 nodes); and the Debian packages' install test (tests/package_test.sh:
# packaging, lintian, a Debian 12 debootstrap and apt from Debian's mirror, ~2.5 min; the
# sd_notify, SIGHUP and join code it reaches runs under the sanitizers in service_e2e_test);
# and a 2,000-member array submitted and cancelled (ArraysE2E.ABigArray: up to 11 s in
# release under load; the array code runs under the sanitizers in the other ArraysE2E tests).
# The release configuration runs them.
SANITIZER_SKIP='^PhillyCongested/|^Philly/ReferenceTest\.|^PgFailoverE2E\.|^HaLoadE2E\.|^TopTmux\.HundredNodes|^package_test$|^ArraysE2E\.ABigArray'
# ThreadSanitizer also skips the browser test (web_e2e: 100 s of Chromium driving the
# UI; the server code it reaches runs under ThreadSanitizer in the API tests) and the
# Python client against `rota dev` (python_client_test: the same API routes). The
# release and sanitize configurations run them.
TSAN_SKIP="$SANITIZER_SKIP|^web_e2e\$|^python_client_test\$"

# run_config NAME BUILD_DIR CTEST_EXCLUDE CMAKE_ARGS...
run_config() {
  local name=$1 dir=$2 exclude=$3; shift 3
  local skip=()
  [ -z "$exclude" ] || skip=(-E "$exclude")
  local t0=$SECONDS
  echo "=== [$name] configure + build ($dir)"
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null || return
  cmake --build "$dir" -j"$JOBS" || return
  local t1=$SECONDS
  echo "=== [$name] built in $((t1 - t0)) s; tests"
  # `|| return`: errexit does not apply inside a function called from `cmd || status=$?`
  # (the tsan configuration), so each step's failure is returned explicitly.
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure -j"$JOBS" --timeout 300 "${skip[@]}" ${CTEST_ARGS:-} || return
  # Tests leave nothing running (servers, agents, task shims, tasks as test users).
  ./scripts/check-leftovers.sh || return
  echo "=== [$name] tests passed in $((SECONDS - t1)) s (configuration: $((SECONDS - t0)) s, command so far: $SECONDS s)"
}

for c in $CONFIGS; do
  case $c in
    # -g1 (line tables: backtraces and sanitizer reports keep file and line) compiles
    # ~35 % faster than full -g with GCC; CI builds four configurations on two cores.
    release) run_config release build "" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" ;;
    sanitize) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      run_config sanitize build-asan "$SANITIZER_SKIP" -DCMAKE_BUILD_TYPE=Debug -DROTA_SANITIZE=ON -DROTA_BUILD_BENCH=OFF \
      "-DCMAKE_CXX_FLAGS_DEBUG=-g1" ;;
    tsan)
      # Every process (tests, and the servers, agents and shims they start) writes its
      # reports to build-tsan/tsan-reports/; any file there fails the run.
      reports=$PWD/build-tsan/tsan-reports
      rm -rf "$reports" && mkdir -p "$reports"
      status=0
      TSAN_OPTIONS="log_path=$reports/report second_deadlock_stack=1 history_size=4" \
        run_config tsan build-tsan "$TSAN_SKIP" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROTA_SANITIZE_THREAD=ON \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" || status=$?
      if compgen -G "$reports/report*" >/dev/null; then
        echo "ThreadSanitizer reports:" >&2
        cat "$reports"/report* >&2
        exit 1
      fi
      [ "$status" -eq 0 ] || exit "$status" ;;
    # Only the fuzz targets and the sources they link (fuzz/CMakeLists.txt); a crash's
    # input is kept in build-fuzz/fuzz-artifacts/<target>/.
    fuzz) run_config fuzz build-fuzz "" -DROTA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DROTA_BUILD_BENCH=OFF \
      "-DROTA_FUZZ_SECONDS=${ROTA_FUZZ_SECONDS:-30}" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" ;;
    *) echo "unknown configuration $c" >&2; exit 2 ;;
  esac
done
echo "all test configurations passed: $CONFIGS"
