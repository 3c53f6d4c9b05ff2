#!/usr/bin/env bash
# Malleable CPU parallelism: 4 co-located CPU trainings (bench/malleable_train.py,
# Debian's PyTorch) on one node of `rota dev`, run twice:
#   static:    each with torch threads = all the node's cores (oversubscribed);
#   malleable: rota run --malleable MIN:CORES, threads following the allotment
#              rota divides among them as they start and end.
# Jobs differ in length (STEPS x 1, 2, 3, 4) so they end at different times.
#   bench/malleable.sh [BUILD_DIR]
# Environment: STEPS (60), BATCH (256), MIN (0.5), REPEAT (1), MODES ("static malleable"),
# KEEP=1 keeps the temp dir.
# Prints per mode the makespan (first start to last end), the aggregate samples/s
# (all samples / makespan) and each job's samples/s, then the ratio.
set -euo pipefail
BUILD=${1:-build}
STEPS=${STEPS:-60}
BATCH=${BATCH:-256}
MIN=${MIN:-0.5}
REPEAT=${REPEAT:-1}
MODES=${MODES:-static malleable}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
for tool in jq curl; do command -v "$tool" >/dev/null || { echo "malleable.sh: needs $tool" >&2; exit 2; }; done
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "malleable.sh: /usr/bin/python3 cannot import torch" >&2; exit 2; }
work=$(mktemp -d /tmp/rota-malleable-bench-XXXXXX)
chmod 755 "$work"
dev_pid=""
cleanup() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

"$BUILD/bin/rota" dev --listen 127.0.0.1:0 --data-dir "$work/dev" --log-level warning >"$work/dev.out" 2>"$work/dev.log" &
dev_pid=$!
for _ in $(seq 200); do grep -q 'ROTA_TOKEN=' "$work/dev.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'ROTA_SERVER=[^ ]*' "$work/dev.out" | head -1 | cut -d= -f2)
admin=$(grep -o 'ROTA_TOKEN=[^ ]*' "$work/dev.out" | sed -n 2p | cut -d= -f2)
for _ in $(seq 300); do
  ready=$(curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/nodes?state=ready" | jq '.nodes | length' || echo 0)
  [ "$ready" -ge 1 ] && break; sleep 0.1
done
node=gpu-a
cores=$(curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/nodes" | jq -r ".nodes[] | select(.name == \"$node\") | .cpus")
unix_user=$(id -un); [ "$(id -u)" = 0 ] && unix_user=nobody
curl -sf -H "Authorization: Bearer $admin" -X POST "$url/api/v1/users" \
  -d "{\"username\":\"bench\",\"role\":\"user\",\"password\":\"bench-password-1\",\"unix_user\":\"$unix_user\"}" >/dev/null
token=$(curl -sf -X POST "$url/api/v1/auth/login" -d '{"username":"bench","password":"bench-password-1"}' | jq -r .token)
export ROTA_SERVER=$url ROTA_TOKEN=$token
echo "== rota dev at $url; node $node has $cores cores; tasks as $unix_user; torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')" >&2

run_mode() {  # $1 mode, $2 round -> prints "makespan aggregate per-job..."
  local mode=$1 out="$work/$1-$2" ids=() i
  mkdir -p "$out"; chmod 777 "$out"
  for i in 1 2 3 4; do
    local extra=(--env THREADS="$cores")
    [ "$mode" = malleable ] && extra=(--malleable "$MIN:$cores" --env ROTA_PY="$src/python")
    ids+=("$("$BUILD/bin/rota" run --name "$mode-$i" --node "$node" --workdir /tmp -o json "${extra[@]}" \
            --env MODE="$mode" --env NAME="job$i" --env STEPS=$((STEPS * i)) --env BATCH="$BATCH" \
            --env RESULT_DIR="$out" --env OMP_NUM_THREADS="$cores" \
            -- /usr/bin/python3 "$here/malleable_train.py" | jq -r .id)")
  done
  for id in "${ids[@]}"; do
    for _ in $(seq 3000); do
      st=$(curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/jobs/$id" | jq -r .state)
      case "$st" in succeeded) break ;; failed|cancelled) echo "job $id $st" >&2; "$BUILD/bin/rota" logs "$id" --stderr >&2; exit 1 ;; esac
      sleep 0.2
    done
  done
  if [ "$mode" = malleable ]; then
    resizes=0
    for id in "${ids[@]}"; do
      n=$(curl -sf -H "Authorization: Bearer $admin" "$url/api/v1/jobs/$id" | jq '[.events[] | select(.reason | startswith("resized"))] | length')
      resizes=$((resizes + n))
    done
    echo "resizes $resizes" >"$out/resizes"
  fi
  jq -s '{makespan: ((map(.end) | max) - (map(.start) | min)), samples: (map(.samples) | add),
          jobs: (map({(.name): (.samples / (.end - .start) | floor)}) | add), changes: (map(.changes) | add)}
         | .aggregate = (.samples / .makespan | floor)' "$out"/job*.json
}

for round in $(seq "$REPEAT"); do
  for mode in $MODES; do
    r=$(run_mode "$mode" "$round")
    echo "$mode round $round: $(echo "$r" | jq -c .) $(cat "$work/$mode-$round/resizes" 2>/dev/null || true)"
    echo "$r" >"$work/$mode-$round.json"
  done
  [ -f "$work/static-$round.json" ] && [ -f "$work/malleable-$round.json" ] || continue
  s=$(jq .aggregate "$work/static-$round.json"); m=$(jq .aggregate "$work/malleable-$round.json")
  sm=$(jq .makespan "$work/static-$round.json"); mm=$(jq .makespan "$work/malleable-$round.json")
  echo "round $round: aggregate samples/s static $s, malleable $m: x$(echo "scale=2; $m / $s" | bc); makespan static ${sm}s, malleable ${mm}s"
done
