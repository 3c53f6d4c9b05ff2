#!/usr/bin/env bash
# Job arrays at scale (issue 45): one request submits an array of N members
# (default 10,000, at most CAP running at once), then the scheduler's passes
# with them queued, the API's views of the array, and cancelling it whole.
#   bench/run_arrays.sh [BUILD_DIR]
# Environment: MEMBERS (10000), CAP (10), STORE (sqlite | a store URL), KEEP=1 keeps the temp dir.
# Starts `rota dev` (3 simulated nodes) on a loopback port with a fresh data dir, creates
# a user whose tasks run as this user (nobody as root), and prints one JSON object:
#   submit_s        POST /api/v1/jobs with "array" (every member stored, one transaction)
#   running_s       submission -> CAP members running
#   pass_*_s        rota_scheduler_last_pass_seconds (snapshot, decide, act) while N-CAP wait
#   pending_seen    rota_scheduler_pending_jobs: what the pass saw (the capped members are not in it)
#   show_s          GET /api/v1/arrays/ID?limit=1000; list_s: GET /api/v1/arrays
#   cancel_s        POST /api/v1/arrays/ID/cancel (all N members' ends committed)
set -euo pipefail
BUILD=${1:-build}
MEMBERS=${MEMBERS:-10000}
CAP=${CAP:-10}
for tool in jq curl; do command -v "$tool" >/dev/null || { echo "run_arrays.sh: needs $tool" >&2; exit 2; }; done
[ -x "$BUILD/bin/rota" ] || { echo "run_arrays.sh: $BUILD/bin/rota missing" >&2; exit 2; }
work=$(mktemp -d /tmp/rota-arrays-XXXXXX)
chmod 755 "$work"
dev_pid=""
cleanup() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
store_env=()
[ -n "${STORE:-}" ] && [ "$STORE" != sqlite ] && store_env=(ROTA_STORE="$STORE")
env "${store_env[@]}" "$BUILD/bin/rota" dev --listen 127.0.0.1:0 --data-dir "$work/dev" --log-level warning \
    >"$work/dev.out" 2>"$work/dev.log" &
dev_pid=$!
for _ in $(seq 200); do grep -q 'ROTA_TOKEN=' "$work/dev.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'ROTA_SERVER=[^ ]*' "$work/dev.out" | head -1 | cut -d= -f2)
admin=$(grep -o 'ROTA_TOKEN=[^ ]*' "$work/dev.out" | sed -n 2p | cut -d= -f2)
[ -n "$url" ] && [ -n "$admin" ] || { echo "rota dev did not start" >&2; cat "$work/dev.log" >&2; exit 1; }
for _ in $(seq 300); do
  ready=$(curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/nodes?state=ready" | jq '.nodes | length' || echo 0)
  [ "$ready" -ge 3 ] && break; sleep 0.1
done
unix_user=$(id -un); [ "$(id -u)" = 0 ] && unix_user=nobody
curl -sf -H "Authorization: Bearer $admin" -X POST "$url/api/v1/users" \
  -d "{\"username\":\"arraybench\",\"role\":\"user\",\"password\":\"array-bench-password\",\"unix_user\":\"$unix_user\"}" >/dev/null
token=$(curl -sf -X POST "$url/api/v1/auth/login" -d '{"username":"arraybench","password":"array-bench-password"}' | jq -r .token)
api() { curl -sf -H "Authorization: Bearer $token" "$@"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }
metric() { curl -sf "$url/metrics" -H "Authorization: Bearer $admin" | awk -v m="$1" '$1 == m {print $2}' | tail -1; }

body=$(jq -cn --arg a "0-$((MEMBERS - 1))%$CAP" \
  '{name: "seeds", command: ["sleep", "600"], workdir: "/tmp", groups: [{role: "worker"}], array: $a}')
t0=$(date +%s.%N)
id=$(api -X POST "$url/api/v1/jobs" -d "$body" | jq .array.id)
t1=$(date +%s.%N)
until [ "$(api "$url/api/v1/arrays/$id?limit=1" | jq '.counts.running // 0')" -ge "$CAP" ]; do sleep 0.05; done
t2=$(date +%s.%N)
sleep 2  # passes with the array queued
snap=$(metric 'rota_scheduler_last_pass_seconds{phase="snapshot"}')
decide=$(metric 'rota_scheduler_last_pass_seconds{phase="decide"}')
act=$(metric 'rota_scheduler_last_pass_seconds{phase="act"}')
pending=$(metric 'rota_scheduler_pending_jobs')
s0=$(date +%s.%N); api "$url/api/v1/arrays/$id?limit=1000" >/dev/null; s1=$(date +%s.%N)
api "$url/api/v1/arrays" >/dev/null; s2=$(date +%s.%N)
api -X POST "$url/api/v1/arrays/$id/cancel" -d '{}' >"$work/cancel.json"; c1=$(date +%s.%N)
jq -n --argjson members "$MEMBERS" --argjson cap "$CAP" --arg submit "$(secs "$t0" "$t1")" \
  --arg running "$(secs "$t1" "$t2")" --arg snap "${snap:-null}" --arg decide "${decide:-null}" \
  --arg act "${act:-null}" --arg pending "${pending:-null}" --arg show "$(secs "$s0" "$s1")" \
  --arg list "$(secs "$s1" "$s2")" --arg cancel "$(secs "$s2" "$c1")" \
  --argjson cancelled "$(jq .cancelled "$work/cancel.json")" \
  '{members: $members, cap: $cap, submit_s: ($submit|tonumber), running_s: ($running|tonumber),
    pass_snapshot_s: ($snap|tonumber? // null), pass_decide_s: ($decide|tonumber? // null),
    pass_act_s: ($act|tonumber? // null), pending_seen: ($pending|tonumber? // null),
    show_s: ($show|tonumber), list_s: ($list|tonumber), cancel_s: ($cancel|tonumber), cancelled: $cancelled}'
