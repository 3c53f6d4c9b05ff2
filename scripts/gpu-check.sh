#!/usr/bin/env bash
# Checks rota against this machine's GPUs and driver, end to end, in about three minutes:
# a server and an agent on loopback, the agent loading the real libnvidia-ml.so.1.
#   scripts/gpu-check.sh [BIN_DIR]          (default build/bin; needs root: it adds two
#                                            Unix users and sets GPU power limits)
# Environment: OUT (where the readings and logs go; default a new temp dir), NVML_LIB
#   (default libnvidia-ml.so.1), PY (a python3 with PyTorch; default python3), LOAD
#   (torch: a matrix-product loop on the GPU; sleep: for the simulated NVML, whose GPU
#   processes are those with CUDA_VISIBLE_DEVICES and ROTA_SIM_NODE=$NODE), NODE (default
#   gpu-check), PORT (default: a free one), JOB_SECONDS (12), SIM (the simulated libnvidia-ml.so.1: one simulated H100 instead of
#   the machine's GPUs, LOAD=sleep; how the test suite runs this script). Exit 77 when not
#   root.
# What it checks, on GPU 0, each line PASS or FAIL (exit 1 if any failed):
#   1. the node's GPUs, names, memory and power limits are those nvidia-smi reports;
#   2. a process started by hand is seen with its Unix user, and utilisation rises;
#   3. a job waits while that process holds the GPU, then runs as its owner, is seen
#      with its job id, and succeeds;
#   4. a power policy caps the GPU (read back with nvidia-smi) and removing it restores
#      the default;
#   5. a process on a GPU reserved by someone else is SIGTERMed (enforcement ladder);
#   6. energy is accounted; the agent's cost per sample is measured (rota_agent_bench).
set -u
BIN=$(cd "${1:-build/bin}" && pwd)
OUT=${OUT:-$(mktemp -d)}
NVML_LIB=${NVML_LIB:-libnvidia-ml.so.1}
PY=${PY:-$(command -v python3)}
LOAD=${LOAD:-torch}
NODE=${NODE:-gpu-check}
JOB_SECONDS=${JOB_SECONDS:-12}
[ "$(id -u)" = 0 ] || { echo "gpu-check.sh: needs root (it adds Unix users and sets power limits)" >&2; exit 77; }
PORT=${PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
mkdir -p "$OUT"
work=$(mktemp -d /tmp/rota-gpu-check-XXXXXX)
chmod 755 "$work"
if [ -n "${SIM:-}" ]; then
  NVML_LIB=$SIM LOAD=sleep
  export ROTA_SIM_NVML_CONFIG=$work/sim.json
  echo '{"node": "'"$NODE"'", "gpus": [{"model": "NVIDIA H100 80GB HBM3", "memory_mib": 81559,
         "power_limit_w": 700, "min_power_limit_w": 200}]}' >"$ROTA_SIM_NVML_CONFIG"
fi
url=http://127.0.0.1:$PORT
export ROTA_SERVER=$url
fails=0
pids=()
log() { echo "== $*"; }
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# json FILE EXPR: evaluates a Python expression over the parsed file `d`.
json() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
smi() { command -v nvidia-smi >/dev/null && nvidia-smi "$@"; }
smi_q() { smi --query-gpu="$1" --format=csv,noheader,nounits -i 0 2>/dev/null | tr -d ' '; }
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  cp "$work"/*.log "$OUT"/ 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# A GPU load of S seconds as Unix user U, in the background; its pid in $! of the caller.
gpu_load() {
  local user=$1 seconds=$2
  if [ "$LOAD" = torch ]; then
    runuser -u "$user" -- env CUDA_VISIBLE_DEVICES=0 "$PY" -c '
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda")
end = time.time() + float(sys.argv[1])
while time.time() < end:
    a = torch.tanh(a @ a)
    torch.cuda.synchronize()
' "$seconds" &
  else
    runuser -u "$user" -- env CUDA_VISIBLE_DEVICES=0 ROTA_SIM_NODE="$NODE" sleep "$seconds" &
  fi
}
# The job: 12 s of matrix products on the GPU it is given (or a sleep, for the simulator).
cat >"$work/job.py" <<'EOF'
import os, time, torch
a = torch.randn(8192, 8192, device="cuda")
end = time.time() + float(os.environ["JOB_SECONDS"])
while time.time() < end:
    a = torch.tanh(a @ a)
    torch.cuda.synchronize()
print("ran on", torch.cuda.get_device_name(0), "CUDA_VISIBLE_DEVICES =", os.environ.get("CUDA_VISIBLE_DEVICES"))
EOF
chmod 644 "$work/job.py"
job_argv() { if [ "$LOAD" = torch ]; then echo "$PY $work/job.py"; else echo "sleep $JOB_SECONDS"; fi; }

log "machine"
{ uname -a; cat /etc/os-release 2>/dev/null | head -2; smi -L;
  smi --query-gpu=name,driver_version,memory.total,power.limit,power.default_limit,power.min_limit,power.max_limit,mig.mode.current,persistence_mode,compute_mode --format=csv;
} | tee "$OUT/machine.txt"

for u in rotacheck rotabob; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"; done

log "server and agent"
ROTA_ADMIN_PASSWORD=gpu-check-admin-pw ROTA_GRACE_EMAIL=1s ROTA_GRACE_TERM=4s ROTA_GRACE_KILL=5s \
  "$BIN/rota" server --listen "127.0.0.1:$PORT" --data-dir "$work/server" --join-token gpu-check-join-token-0123 \
  >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do "$PY" -c "import urllib.request as u; u.urlopen('$url/readyz')" 2>/dev/null && break; sleep 0.1; done
"$BIN/rota" agent --server "$url" --token gpu-check-join-token-0123 --name "$NODE" --state-dir "$work/agent" \
  --interval 1s --nvml-lib "$NVML_LIB" >"$work/agent.log" 2>&1 &
pids+=($!)
login() {
  "$PY" -c '
import json, sys, urllib.request as u
r = u.Request(sys.argv[1] + "/api/v1/auth/login", json.dumps({"username": sys.argv[2], "password": sys.argv[3]}).encode(), {"Content-Type": "application/json"})
print(json.load(u.urlopen(r))["token"])' "$url" "$1" "$2"
}
ROTA_TOKEN=$(login admin gpu-check-admin-pw) || { fail "admin login"; cat "$work/server.log"; exit 1; }
export ROTA_TOKEN
admin_token=$ROTA_TOKEN
for _ in $(seq 100); do
  "$BIN/rota" gpus -o json >"$OUT/gpus-idle.json" 2>/dev/null
  [ "$(json "$OUT/gpus-idle.json" 'len(d["gpus"]) if isinstance(d, dict) else len(d)')" -gt 0 ] 2>/dev/null && break
  sleep 0.2
done
"$BIN/rota" nodes -o json >"$OUT/nodes.json"
"$BIN/rota" nodes
"$BIN/rota" gpus
cp "$OUT/gpus-idle.json" "$work/g.json"

log "1. inventory"
gpus_expr='d["gpus"] if isinstance(d, dict) else d'
n_rota=$(json "$work/g.json" "len($gpus_expr)")
n_smi=""; command -v nvidia-smi >/dev/null && n_smi=$(nvidia-smi -L | grep -c '^GPU')
[ -n "$n_rota" ] && [ "$n_rota" -gt 0 ] && pass "rota sees $n_rota GPU(s)" || fail "rota sees no GPU"
[ -z "$n_smi" ] || [ "$n_smi" = "$n_rota" ] && pass "GPU count matches nvidia-smi (${n_smi:-no nvidia-smi})" || fail "GPU count: rota $n_rota, nvidia-smi $n_smi"
name=$(json "$work/g.json" "($gpus_expr)[0].get('name') or ($gpus_expr)[0].get('model')")
smi_name=$(smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null)
[ -z "$smi_name" ] || [ "$smi_name" = "$name" ] && pass "GPU 0 is '$name'" || fail "GPU 0 name: rota '$name', nvidia-smi '$smi_name'"
if command -v nvidia-smi >/dev/null; then
  mem=$(json "$work/g.json" "($gpus_expr)[0]['memory_total_bytes'] // 1048576"); smi_mem=$(smi_q memory.total)
  [ "$mem" = "$smi_mem" ] && pass "GPU 0 memory $mem MiB" || fail "GPU 0 memory: rota $mem MiB, nvidia-smi $smi_mem MiB"
  lim=$(json "$work/g.json" "round(($gpus_expr)[0]['power_limit_mw'] / 1000)"); smi_lim=$(printf '%.0f' "$(smi_q power.limit)")
  [ "$lim" = "$smi_lim" ] && pass "GPU 0 power limit $lim W" || fail "GPU 0 power limit: rota $lim W, nvidia-smi $smi_lim W"
fi
echo "GPU 0 as rota reports it:"; json "$work/g.json" "json.dumps(($gpus_expr)[0], indent=1)"

log "2. a process started by hand"
gpu_load rotabob 600; bob_pid=$!; pids+=($bob_pid)  # until the job has been seen waiting
seen=""
for _ in $(seq 120); do
  sleep 0.5
  "$BIN/rota" gpus -o json >"$work/g.json" 2>/dev/null || continue
  seen=$(json "$work/g.json" "[p.get('user') for g in ($gpus_expr) for p in g.get('processes', [])]")
  case "$seen" in *rotabob*) break ;; esac
done
cp "$work/g.json" "$OUT/gpus-hand-process.json"
case "$seen" in *rotabob*) pass "hand-started process seen as rotabob" ;; *) fail "hand-started process not seen (processes: $seen)" ;; esac
sleep 3
"$BIN/rota" gpus -o json >"$work/g.json"; cp "$work/g.json" "$OUT/gpus-busy.json"
util=$(json "$work/g.json" "($gpus_expr)[0].get('util_gpu_pct')")
[ "${util:-0}" -gt 0 ] 2>/dev/null && pass "GPU 0 utilisation under load: $util %" || fail "GPU 0 utilisation under load: $util"
"$BIN/rota" gpus

log "3. a job waits for the hand-started process, then runs"
"$BIN/rota" user add alice --unix-user rotacheck --password-stdin <<<"alice-gpu-check-pw" >/dev/null
alice_token=$(login alice alice-gpu-check-pw)
# shellcheck disable=SC2046
ROTA_TOKEN=$alice_token "$BIN/rota" run --name gpu-check --gpus-per-task 1 \
  --env "JOB_SECONDS=$JOB_SECONDS" --env "ROTA_SIM_NODE=$NODE" -o json -- $(job_argv) >"$work/job.json"
job=$(json "$work/job.json" "d.get('id') or d.get('job', {}).get('id')")
sleep 2
ROTA_TOKEN=$alice_token "$BIN/rota" job show "$job" -o json >"$OUT/job-waiting.json"
state=$(json "$OUT/job-waiting.json" "d.get('state')")
reason=$(json "$OUT/job-waiting.json" "d.get('wait_reason') or d.get('reason')")
[ "$state" = pending ] && pass "job $job waits while rotabob holds the GPU: $reason" || fail "job $job is '$state' while the GPU is busy (reason: $reason)"
kill "$bob_pid"; wait "$bob_pid" 2>/dev/null  # runuser passes the SIGTERM on
t0=$(date +%s.%N)
elapsed() { "$PY" -c "import time; print(round(time.time() - $1, 1))"; }
seen=""
for _ in $(seq 120); do
  sleep 0.5
  "$BIN/rota" gpus -o json >"$work/g.json" 2>/dev/null || continue
  seen=$(json "$work/g.json" "[(p.get('user'), p.get('cgroup')) for g in ($gpus_expr) for p in g.get('processes', [])]")
  case "$seen" in *rotacheck*) break ;; esac
done
cp "$work/g.json" "$OUT/gpus-job.json"
echo "GPU processes while the job runs: $seen (seen $(elapsed "$t0") s after the hand process ended)"
case "$seen" in *rotacheck*".job-$job."*) pass "job's process seen as rotacheck in job $job's cgroup" ;; *) fail "job's process not seen with its user and job: $seen" ;; esac
for _ in $(seq 120); do
  ROTA_TOKEN=$alice_token "$BIN/rota" job show "$job" -o json >"$OUT/job-done.json" 2>/dev/null
  state=$(json "$OUT/job-done.json" "d.get('state')")
  case "$state" in succeeded|failed|cancelled|lost) break ;; esac
  sleep 0.5
done
[ "$state" = succeeded ] && pass "job $job succeeded" || fail "job $job ended '$state'"
ROTA_TOKEN=$alice_token "$BIN/rota" job show "$job"
ROTA_TOKEN=$alice_token "$BIN/rota" logs "$job" 2>&1 | tail -3

log "4. power policy"
"$BIN/rota" power -o json >"$OUT/power-before.json"; "$BIN/rota" power
gpu0() { json "$1" "d['gpus'][0].get('$2')"; }
default_w=$(gpu0 "$OUT/power-before.json" default_w); min_w=$(gpu0 "$OUT/power-before.json" min_w)
max_w=$(gpu0 "$OUT/power-before.json" max_w)
echo "rota: default $default_w W, range $min_w-$max_w W; nvidia-smi: default $(smi_q power.default_limit), range $(smi_q power.min_limit)-$(smi_q power.max_limit), in force $(smi_q power.limit)"
# in_force W: nvidia-smi's reading where there is one, else rota's
in_force() {
  local w; w=$(smi_q power.limit)
  [ -z "$w" ] && { "$BIN/rota" power -o json >"$work/p.json"; w=$(gpu0 "$work/p.json" in_force_w); }
  printf '%.0f' "$w"
}
cap=$("$PY" -c "print(int((float('$min_w') + float('$max_w')) / 2))")
"$BIN/rota" power policy add gpu-check-cap --limit "${cap}W" --description "gpu-check" >/dev/null
t0=$(date +%s.%N)
for _ in $(seq 40); do got=$(in_force); [ "$got" = "$cap" ] && break; sleep 0.25; done
[ "$got" = "$cap" ] && pass "GPU 0 capped at $cap W in $(elapsed "$t0") s (read back: $got W)" \
  || fail "GPU 0 limit $got W, expected $cap W"
"$BIN/rota" power
"$BIN/rota" power policy rm gpu-check-cap >/dev/null
want=$(printf '%.0f' "$default_w")
for _ in $(seq 40); do got=$(in_force); [ "$got" = "$want" ] && break; sleep 0.25; done
[ "$got" = "$want" ] && pass "default limit restored ($got W)" || fail "limit $got W after the policy's removal, default $want W"
"$BIN/rota" power events -o json >"$OUT/power-events.json"; "$BIN/rota" power events

log "5. enforcement of a reservation"
ROTA_TOKEN=$alice_token "$BIN/rota" reserve --node "$NODE" --gpus 0 --duration 30m --title gpu-check >/dev/null \
  && pass "alice reserved GPU 0" || fail "alice could not reserve GPU 0"
gpu_load rotabob 600; bob_pid=$!; pids+=($bob_pid)
t0=$(date +%s)
for _ in $(seq 120); do kill -0 "$bob_pid" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$bob_pid" 2>/dev/null; then fail "rotabob's process still runs on alice's GPU after $(( $(date +%s) - t0 )) s"; kill "$bob_pid"
else pass "rotabob's process on alice's GPU was stopped after $(( $(date +%s) - t0 )) s"; fi
"$BIN/rota" violations -o json >"$OUT/violations.json"; "$BIN/rota" violations

log "6. energy and the agent's cost"
sleep 2
"$BIN/rota" energy --by node --from 1h -o json >"$OUT/energy.json"; "$BIN/rota" energy --by node --from 1h
"$BIN/rota" usage --by job --from 1h -o json >"$OUT/usage.json"; "$BIN/rota" usage --by job --from 1h
if [ -x "$BIN/rota_agent_bench" ]; then
  "$BIN/rota_agent_bench" --sim-lib "$NVML_LIB" --gpus 1 --processes 0 --samples 20 --interval-ms 200 \
    | tee "$OUT/agent-bench.json"
fi
grep -iE "warn|error|refus|not supported" "$work/agent.log" | sort | uniq -c | sort -rn | head -20
echo "== $fails check(s) failed"
[ "$fails" = 0 ]
