#!/usr/bin/env bash
# Login flood benchmark (issue 41): starts `rota dev` (server + 3 simulated GPU nodes,
# argon2id at its default cost) on a loopback port with a fresh data dir and runs
# build/bin/rota_login_flood against it: CLIENTS (200) clients send wrong passwords for
# FLOOD_SECONDS (20) while a signed-in client measures GET /api/v1/nodes and /healthz (after
# IDLE_S (5) seconds of the same probe without the flood). HONOUR=1: the flood clients
# wait what Retry-After says. LOG_FOLLOWERS=50: first JOBS (10) one-GPU jobs that print a
# line every LINE_MS (200) ms, then that many clients follow their logs as `rota logs
# --follow` and the web UI do, alone for FOLLOW_S (5) s and then through the flood; the
# JSON then also says how the jobs ended and whether a node changed state, and this
# script counts the agents' lost connections in their logs. Prints the JSON; KEEP=1 keeps
# the temp dir.
#   bench/run_login_flood.sh [BUILD_DIR]
#   LOG_FOLLOWERS=50 bench/run_login_flood.sh build
set -euo pipefail
BUILD=${1:-build}
CLIENTS=${CLIENTS:-200}
SECONDS_=${FLOOD_SECONDS:-20}
IDLE_S=${IDLE_S:-5}
HONOUR=${HONOUR:-0}
LOG_FOLLOWERS=${LOG_FOLLOWERS:-0}
JOBS=${JOBS:-10}
LINE_MS=${LINE_MS:-200}
FOLLOW_S=${FOLLOW_S:-5}
for bin in rota rota_login_flood; do
  [ -x "$BUILD/bin/$bin" ] || { echo "run_login_flood.sh: $BUILD/bin/$bin missing (build with -DROTA_BUILD_BENCH=ON)" >&2; exit 2; }
done
work=$(mktemp -d "${BENCH_TMP:-/tmp}/rota-flood-XXXXXX")
dev_pid=""
cleanup() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
"$BUILD/bin/rota" dev --listen 127.0.0.1:0 --data-dir "$work/dev" --log-level warning \
    >"$work/dev.out" 2>"$work/dev.log" &
dev_pid=$!
for _ in $(seq 400); do grep -q 'ROTA_TOKEN=' "$work/dev.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'ROTA_SERVER=[^ ]*' "$work/dev.out" | head -1 | cut -d= -f2)
admin_token=$(grep -o 'ROTA_TOKEN=[^ ]*' "$work/dev.out" | sed -n 2p | cut -d= -f2)
[ -n "$url" ] && [ -n "$admin_token" ] || { echo "rota dev did not start:" >&2; cat "$work/dev.out" "$work/dev.log" >&2; exit 1; }
echo "== rota dev at $url (pid $dev_pid); $CLIENTS flood clients for ${SECONDS_} s, $LOG_FOLLOWERS log followers" >&2
# Tasks never run as root: as root, the bench user's tasks run as nobody.
unix_user=$(id -un); [ "$(id -u)" = 0 ] && unix_user=nobody
"$BUILD/bin/rota_login_flood" --server "$url" --token "$admin_token" --clients "$CLIENTS" \
    --seconds "$SECONDS_" --idle-s "$IDLE_S" --honour-retry-after "$HONOUR" \
    --log-followers "$LOG_FOLLOWERS" --jobs "$JOBS" --line-ms "$LINE_MS" --follow-s "$FOLLOW_S" \
    --unix-user "$unix_user"
if [ "$LOG_FOLLOWERS" -gt 0 ]; then
  # What the agents saw: every lost or closed connection is logged (at warning), and
  # rota dev logs an agent it had to restart.
  lost=$(cat "$work"/dev/nodes/*/agent.log 2>/dev/null | grep -c 'connection to server \(lost\|closed\)' || true)
  restarted=$(grep -c 'restarting it' "$work/dev.log" || true)
  echo "agents: connections lost (agent logs) $lost, agents restarted $restarted" >&2
fi
metrics=$(curl -s -H "Authorization: Bearer $admin_token" "$url/metrics" | grep -E '^rota_(login|password_hash|server_connected_agents)' || true)
echo "$metrics" >&2
