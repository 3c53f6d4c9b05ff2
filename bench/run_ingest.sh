#!/usr/bin/env bash
# Server ingest benchmark: starts `rota server` on loopback with a fresh data dir,
# then runs the load generator with N agents (each 8 GPUs, one sample per INTERVAL seconds,
# default 1).
#   bench/run_ingest.sh [BUILD_DIR] [N...]      e.g. bench/run_ingest.sh build 500 1000 2000
#   INTERVAL=5 bench/run_ingest.sh build 10000
#   PROBE_PAGE=0 bench/run_ingest.sh build 1000   # the API probe reads every GPU at once
#   SERVER_PRELOAD=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 bench/run_ingest.sh build 8000
#                                                 # another allocator in the server only
#   TLS=1 bench/run_ingest.sh build 10000         # the server with `tls: on` (its generated CA),
#                                                 # the agents over wss://, the probe over https://
#   TLS="0 1 0 1" bench/run_ingest.sh build 10000 # alternating plain and TLS runs, per count
set -euo pipefail
BUILD=${1:-build}; shift || true
COUNTS=${*:-"500 1000 2000"}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-30}
INTERVAL=${INTERVAL:-1}  # each agent's sample interval in seconds
PROBE_PAGE=${PROBE_PAGE:-100}  # GPUs per GET /api/v1/gpus of the API probe (0: all)
TLS_RUNS=${TLS:-0}  # one run per word: 0 plain, 1 TLS
ulimit -n 20000 2>/dev/null || true
for n in $COUNTS; do
for tls in $TLS_RUNS; do
  dir=$(mktemp -d /tmp/rota-ingest-XXXXXX)
  tls_mode=auto; curl_tls=(); load_tls=()  # auto: plain HTTP on loopback
  if [ "$tls" = 1 ]; then
    tls_mode=on; curl_tls=(--cacert "$dir/tls/ca.pem"); load_tls=(--ca-file "$dir/tls/ca.pem")
  fi
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
  LD_PRELOAD=${SERVER_PRELOAD:-} ROTA_TLS=$tls_mode ROTA_ADMIN_PASSWORD=$password "$BUILD/bin/rota" server --listen 127.0.0.1:0 --data-dir "$dir" \
      --join-token "$token" --log-level warning >"$dir.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -s "$dir/server.url" ] && break; sleep 0.1; done
  url=$(cat "$dir/server.url")
  # The API probe reads as a signed-in user (anonymous reads are off by default).
  api_token=$(curl -sf "${curl_tls[@]}" -X POST "$url/api/v1/auth/login" -H 'Content-Type: application/json' \
      -d "{\"username\":\"admin\",\"password\":\"$password\"}" |
      sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  [ -n "$api_token" ] || { echo "cannot sign in to $url" >&2; exit 1; }
  echo "== $n agents against $url (server pid $pid, tls $tls_mode)" >&2
  "$BUILD/bin/rota_ingest_load" --server "$url" --token "$token" --api-token "$api_token" \
      --server-pid "$pid" \
      --agents "$n" --seconds "$SECONDS_PER_RUN" --ramp-seconds "${RAMP_SECONDS:-10}" --interval "$INTERVAL" \
      --probe-page "$PROBE_PAGE" "${load_tls[@]}"
  kill "$pid"; wait "$pid" || true
  rm -rf "$dir" "$dir.log"
done
done
