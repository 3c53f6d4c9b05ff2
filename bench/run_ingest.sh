#!/usr/bin/env bash
# Server ingest benchmark: starts `rota server` on loopback with a fresh data dir,
# then runs the load generator with N agents (each 8 GPUs, one sample per INTERVAL seconds,
# default 1).
#   bench/run_ingest.sh [BUILD_DIR] [N...]      e.g. bench/run_ingest.sh build 500 1000 2000
#   INTERVAL=5 bench/run_ingest.sh build 10000
#   PROBE_PAGE=0 bench/run_ingest.sh build 1000   # the API probe reads every GPU at once
#   SERVER_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 bench/run_ingest.sh build 8000
#                                                 # another allocator in the server only
set -euo pipefail
BUILD=${1:-build}; shift || true
COUNTS=${*:-"500 1000 2000"}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-30}
INTERVAL=${INTERVAL:-1}  # each agent's sample interval in seconds
PROBE_PAGE=${PROBE_PAGE:-100}  # GPUs per GET /api/v1/gpus of the API probe (0: all)
ulimit -n 20000 2>/dev/null || true
for n in $COUNTS; do
  dir=$(mktemp -d /tmp/rota-ingest-XXXXXX)
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  LD_PRELOAD=${SERVER_PRELOAD:-} ROTA_ADMIN_PASSWORD=$password "$BUILD/bin/rota" server --listen 127.0.0.1:0 --data-dir "$dir" \
      --join-token "$token" --log-level warning >"$dir.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -s "$dir/server.url" ] && break; sleep 0.1; done
  url=$(cat "$dir/server.url")
  # The API probe reads as a signed-in user (anonymous reads are off by default).
  api_token=$(curl -sf -X POST "$url/api/v1/auth/login" -H 'Content-Type: application/json' \
      -d "{\"username\":\"admin\",\"password\":\"$password\"}" |
      sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  [ -n "$api_token" ] || { echo "cannot sign in to $url" >&2; exit 1; }
  echo "== $n agents against $url (server pid $pid)" >&2
  "$BUILD/bin/rota_ingest_load" --server "$url" --token "$token" --api-token "$api_token" \
      --server-pid "$pid" \
      --agents "$n" --seconds "$SECONDS_PER_RUN" --ramp-seconds "${RAMP_SECONDS:-10}" --interval "$INTERVAL" \
      --probe-page "$PROBE_PAGE"
  kill "$pid"; wait "$pid" || true
  rm -rf "$dir" "$dir.log"
done
