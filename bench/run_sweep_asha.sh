#!/usr/bin/env bash
# Early stopping pays (issue 45's goal): the same 100-trial grid sweep of a synthetic
# trainer (bench/sweep_trainer.py: known curves, lr = 1e-3 best at every step, STEPS steps
# of STEP_S s each) run twice on one `rota dev`, one after the other: in full, then with
# ASHA (rungs 1, 3, 9, 27; reduction 3). Goal: ASHA uses less than half the GPU time of the
# full grid and finds the same best trial.
#   bench/run_sweep_asha.sh [BUILD_DIR]
# Environment: TRIALS (100), STEPS (27), STEP_S (0.5), CAP (14: the dev cluster's GPUs),
# KEEP=1 keeps the temp dir. Prints one JSON object: per run, wall_s (submission -> every
# trial ended), gpu_s (the trials' gpu_seconds summed), stopped (trials stopped early),
# best_lr (the completed trial with the lowest last loss); and gpu_ratio (asha / full).
set -euo pipefail
BUILD=${1:-build}
TRIALS=${TRIALS:-100}
STEPS=${STEPS:-27}
STEP_S=${STEP_S:-0.5}
CAP=${CAP:-14}
here=$(cd "$(dirname "$0")" && pwd)
for tool in jq curl python3; do command -v "$tool" >/dev/null || { echo "run_sweep_asha.sh: needs $tool" >&2; exit 2; }; done
[ -x "$BUILD/bin/rota" ] || { echo "run_sweep_asha.sh: $BUILD/bin/rota missing" >&2; exit 2; }
work=$(mktemp -d /tmp/rota-asha-XXXXXX)
chmod 755 "$work"
install -m 755 "$here/sweep_trainer.py" "$work/sweep_trainer.py"
dev_pid=""
cleanup() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
"$BUILD/bin/rota" dev --listen 127.0.0.1:0 --data-dir "$work/dev" --log-level warning \
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
  -d "{\"username\":\"ashabench\",\"role\":\"user\",\"password\":\"asha-bench-password\",\"unix_user\":\"$unix_user\"}" >/dev/null
token=$(curl -sf -X POST "$url/api/v1/auth/login" -d '{"username":"ashabench","password":"asha-bench-password"}' | jq -r .token)
api() { curl -sf -H "Authorization: Bearer $token" "$@"; }

# TRIALS learning rates, log-spaced over 1e-5..1e-1, in a fixed shuffled order (so the
# best trial is not simply the first or the last one started).
lrs=$(python3 -c "
import json, random
n = $TRIALS
v = [float('%.6g' % 10 ** (-5 + 4 * i / max(1, n - 1))) for i in range(n)]
random.Random(7).shuffle(v)
print(json.dumps(v))")

# Runs one sweep ($1: its name, $2: the early_stopping object or null); prints its JSON.
run_sweep() {
  local body id t0 t1 members
  body=$(jq -cn --arg name "$1" --argjson es "$2" --argjson lrs "$lrs" --argjson cap "$CAP" \
    --arg trainer "$work/sweep_trainer.py" --arg steps "$STEPS" --arg step_s "$STEP_S" \
    '{name: $name, command: ["python3", $trainer, "--lr", "{lr}", "--steps", $steps, "--step-s", $step_s],
      workdir: "/tmp", groups: [{role: "worker", gpus_per_task: 1}],
      sweep: ({method: "grid", parameters: {lr: $lrs}, max_running: $cap}
              + (if $es == null then {} else {early_stopping: $es} end))}')
  t0=$(date +%s.%N)
  id=$(api -X POST "$url/api/v1/jobs" -d "$body" | jq .array.id)
  until api "$url/api/v1/arrays/$id?limit=1" |
        jq -e '[.counts // {} | (.pending, .starting, .running) // 0] | add == 0' >/dev/null; do
    sleep 0.2
  done
  t1=$(date +%s.%N)
  members=$(api "$url/api/v1/arrays/$id?limit=1000")
  jq -c --arg wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')" '
    [.members[]] as $m
    | ($m | map(select(.state == "succeeded" and ((.reason // "") | startswith("stopped early") | not)))) as $done
    | {wall_s: ($wall | tonumber),
       gpu_s: ($m | map(.gpu_seconds // 0) | add | . * 10 | round / 10),
       trials: ($m | length),
       completed: ($done | length),
       stopped: ($m | map(select((.reason // "") | startswith("stopped early"))) | length),
       failed: ($m | map(select(.state != "succeeded")) | length),
       best_lr: ($done | map(select(.metrics.loss != null)) | min_by(.metrics.loss.last) | .params.lr),
       best_loss: ($done | map(select(.metrics.loss != null)) | min_by(.metrics.loss.last) | .metrics.loss.last)}' \
    <<<"$members"
}

full=$(run_sweep full null)
asha=$(run_sweep asha '{"rule": "asha", "metric": "loss", "goal": "min", "min_step": 1, "reduction": 3, "max_step": 27}')
jq -n --argjson full "$full" --argjson asha "$asha" --argjson trials "$TRIALS" --argjson steps "$STEPS" \
  --arg step_s "$STEP_S" --argjson cap "$CAP" \
  '{trials: $trials, steps: $steps, step_s: ($step_s | tonumber), cap: $cap, full: $full, asha: $asha,
    gpu_ratio: (($asha.gpu_s / $full.gpu_s) * 1000 | round / 1000),
    same_best: ($asha.best_lr == $full.best_lr)}'
