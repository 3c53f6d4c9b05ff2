#!/usr/bin/env bash
# Job launch benchmark, rota and (optionally) Slurm side by side in one run.
#   bench/run_jobs.sh [BUILD_DIR]                 rota only
#   SLURM=1 bench/run_jobs.sh [BUILD_DIR]         then Slurm 22.05 on this machine (root)
# Environment: LATENCY_JOBS (30), GANG_TASKS (8), JOBS (1000), CLIENTS (4),
#   KEEP_ALIVE (1: rota's clients keep their connection, as API clients do; 0: one
#   connection per request), BENCH_TMP (/tmp: where both sides keep their files),
#   GPUS_PER_JOB (0, the throughput jobs), SLURM_PEER (/work/shared/peers/slurm),
#   SLURM_SCHED_PARAMS (empty = Slurm defaults; e.g. batch_sched_delay=0), KEEP=1 keeps
#   the temp dirs. STORE: sqlite (default, the data dir's rota.db), postgres (a
#   PostgreSQL 15 that rota_pg_test_server starts in the temp dir, as the tests do:
#   loopback, fsync off) or a store URL (postgresql://..., an empty database), handed to
#   rota dev as ROTA_STORE. QUEUED (0) and FILLS (10): the full-cluster scenario of
#   rota_job_launch (QUEUED one-GPU jobs behind busy GPUs; how fast a freed GPU is
#   taken; API latency with the queue full).
# rota: starts `rota dev` (server + 3 simulated GPU nodes, 14 GPUs) on a loopback port
# with a fresh data dir and runs build/bin/rota_job_launch against it; then stops it.
# Slurm: copies the peer setup to a temp dir, starts munged + slurmctld + one slurmd
# (64 CPUs, 16 fake GPUs), measures the same three things with sbatch/squeue and the
# jobs' own `date +%s.%N` output, and tears it down (teardown.sh kills only its PIDs).
# Prints each side's JSON and a comparison table.
set -euo pipefail
BUILD=${1:-build}
LATENCY_JOBS=${LATENCY_JOBS:-30}
GANG_TASKS=${GANG_TASKS:-8}
JOBS=${JOBS:-1000}
CLIENTS=${CLIENTS:-4}
GPUS_PER_JOB=${GPUS_PER_JOB:-0}
SLURM=${SLURM:-0}
SLURM_PEER=${SLURM_PEER:-/work/shared/peers/slurm}
BENCH_TMP=${BENCH_TMP:-/tmp}
KEEP_ALIVE=${KEEP_ALIVE:-1}
QUEUED=${QUEUED:-0}
FILLS=${FILLS:-10}
STORE=${STORE:-sqlite}
for tool in jq curl; do
  command -v "$tool" >/dev/null || { echo "run_jobs.sh: needs $tool" >&2; exit 2; }
done
for bin in rota rota_job_launch; do
  [ -x "$BUILD/bin/$bin" ] || { echo "run_jobs.sh: $BUILD/bin/$bin missing (build with -DROTA_BUILD_BENCH=ON)" >&2; exit 2; }
done
if [ "$SLURM" = 1 ] && [ "$(id -u)" != 0 ]; then
  echo "run_jobs.sh: SLURM=1 needs root (it starts Slurm's daemons)" >&2; exit 2
fi

work=$(mktemp -d "$BENCH_TMP/rota-jobs-XXXXXX")
chmod 755 "$work"
dev_pid=""
slurm_dir=""
pg_state=""
cleanup() {
  if [ -n "$dev_pid" ] && kill -0 "$dev_pid" 2>/dev/null; then
    kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true
  fi
  if [ -n "$pg_state" ]; then "$pgsrv" stop "$pg_state" || true; fi
  if [ -n "$slurm_dir" ] && [ -f "$slurm_dir/pids" ]; then bash "$slurm_dir/teardown.sh" >&2 || true; fi
  if [ "${KEEP:-0}" != 1 ]; then rm -rf "$work" ${slurm_dir:+"$slurm_dir"}; fi
}
trap cleanup EXIT

# ---------------------------------------------------------------- rota --------
store_env=()
pgsrv="$BUILD/src/server/store/rota_pg_test_server"  # built with the tests
case "$STORE" in
  sqlite) ;;
  postgres)
    pg_state="$work/pg.state"
    "$pgsrv" start "$pg_state" >&2
    store_env=(ROTA_STORE="$("$pgsrv" createdb "$pg_state")") ;;
  postgresql://*|postgres://*|sqlite:*) store_env=(ROTA_STORE="$STORE") ;;
  *) echo "run_jobs.sh: STORE must be sqlite, postgres or a store URL" >&2; exit 2 ;;
esac
echo "== store: ${store_env[*]:-rota.db in the data dir}" >&2
env "${store_env[@]}" "$BUILD/bin/rota" dev --listen 127.0.0.1:0 --data-dir "$work/dev" --log-level warning \
    >"$work/dev.out" 2>"$work/dev.log" &
dev_pid=$!
for _ in $(seq 200); do grep -q 'ROTA_TOKEN=' "$work/dev.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'ROTA_SERVER=[^ ]*' "$work/dev.out" | head -1 | cut -d= -f2)
admin_token=$(grep -o 'ROTA_TOKEN=[^ ]*' "$work/dev.out" | sed -n 2p | cut -d= -f2)
[ -n "$url" ] && [ -n "$admin_token" ] || { echo "rota dev did not start:" >&2; cat "$work/dev.out" "$work/dev.log" >&2; exit 1; }
for _ in $(seq 300); do
  ready=$(curl -sf -H "Authorization: Bearer $admin_token" "$url/api/v1/nodes?state=ready" | jq '.nodes | length' || echo 0)
  [ "$ready" -ge 3 ] && break; sleep 0.1
done
[ "$ready" -ge 3 ] || { echo "rota dev: only $ready of 3 nodes ready" >&2; exit 1; }
# Tasks never run as root: as root, the bench user's tasks run as nobody.
unix_user=$(id -un); [ "$(id -u)" = 0 ] && unix_user=nobody
echo "== rota dev at $url (pid $dev_pid), 3 simulated nodes, tasks as $unix_user" >&2
"$BUILD/bin/rota_job_launch" --server "$url" --token "$admin_token" --unix-user "$unix_user" \
    --latency-jobs "$LATENCY_JOBS" --gang-tasks "$GANG_TASKS" --jobs "$JOBS" --clients "$CLIENTS" \
    --gpus-per-job "$GPUS_PER_JOB" --keep-alive "$KEEP_ALIVE" --queued "$QUEUED" --fills "$FILLS" \
    >"$work/rota.json"
kill "$dev_pid"; wait "$dev_pid" 2>/dev/null || true; dev_pid=""
echo "rota: $(cat "$work/rota.json")"

[ "$SLURM" = 1 ] || exit 0

# ---------------------------------------------------------------- Slurm -------
now() { date +%s.%N; }
# Waits until Slurm has no job left pending, running or completing.
slurm_drain() { while [ -n "$(squeue -h -o %i | head -1)" ]; do sleep 0.02; done; }
# Percentile P (0..1) of the numbers on stdin, nearest rank as the C++ side.
pct() { sort -n | awk -v p="$1" '{v[NR]=$1} END {if (NR) {i=int(p*(NR-1)+0.5)+1; printf "%.1f", v[i]} else print "null"}'; }

slurm_dir=$(mktemp -d "$BENCH_TMP/rota-slurm-XXXXXX")
cp -r "$SLURM_PEER/." "$slurm_dir/"
rm -f "$slurm_dir/pids"
echo "== Slurm: setup from $slurm_dir (1 node, 64 CPUs, 16 fake GPUs)" >&2
if ! NNODES=1 CPUS_PER_NODE=64 GPUS_PER_NODE=16 SCHED_PARAMS="${SLURM_SCHED_PARAMS:-}" \
     bash "$slurm_dir/setup.sh" >"$work/slurm-setup.log" 2>&1; then
  echo "Slurm setup failed (rota results above stand):" >&2; tail -20 "$work/slurm-setup.log" >&2; exit 1
fi
out="$work/slurm-out"; mkdir -p "$out"

# Latency: one job at a time on the idle cluster; the job prints its own start time.
slurm_latency() {  # $1 tasks; prints submit -> (last) task start, ms, one per line
  local tasks=$1 i t0 id
  for i in $(seq "$LATENCY_JOBS"); do
    t0=$(now)
    if [ "$tasks" = 1 ]; then
      id=$(sbatch --parsable --gres=gpu:1 -o "$out/lat1-%j.out" --wrap 'date +%s.%N; sleep 0.5')
      f="$out/lat1-$id.out"
    else
      id=$(sbatch --parsable -n "$tasks" --gres=gpu:"$tasks" -o "$out/gang-%j.out" \
             --wrap "srun -n $tasks sh -c 'date +%s.%N; exec sleep 0.5'")
      f="$out/gang-$id.out"
    fi
    slurm_drain
    awk -v t0="$t0" '$1 > 1e9 {if ($1 > m) m = $1} END {if (m) printf "%.1f\n", (m - t0) * 1000}' "$f"
  done
}
slurm_latency 1 >"$work/slurm-lat1"
slurm_latency "$GANG_TASKS" >"$work/slurm-gang"

# Throughput: JOBS one-task jobs from CLIENTS concurrent sbatch streams, run to completion.
gres=(); [ "$GPUS_PER_JOB" -gt 0 ] && gres=(--gres=gpu:"$GPUS_PER_JOB")
t0=$(now)
seq "$JOBS" | xargs -P "$CLIENTS" -I{} sbatch --parsable "${gres[@]}" \
    -o "$out/tp-%j.out" --wrap 'date +%s.%N' >"$work/slurm-ids"
t_sub=$(now)
while true; do  # twice in a row empty, as the C++ side
  slurm_drain; t_done=$(now); sleep 0.05
  [ -z "$(squeue -h -o %i | head -1)" ] && break
done
submitted=$(wc -l <"$work/slurm-ids")
# (find, not a glob: with JOBS=0 there is no output file)
started=$(find "$out" -name 'tp-*.out' -exec cat {} + | awk '$1 > 1e9' | wc -l)
last_start=$(find "$out" -name 'tp-*.out' -exec cat {} + | awk '$1 > 1e9' | sort -n | tail -1)
jq -n --argjson n "$JOBS" --argjson submitted "$submitted" --argjson started "$started" \
   --argjson t0 "$t0" --argjson t_sub "$t_sub" --argjson t_done "$t_done" --argjson last "${last_start:-0}" \
   --argjson l50 "$(pct 0.5 <"$work/slurm-lat1")" --argjson l90 "$(pct 0.9 <"$work/slurm-lat1")" \
   --argjson l99 "$(pct 0.99 <"$work/slurm-lat1")" --argjson g50 "$(pct 0.5 <"$work/slurm-gang")" \
   --argjson g90 "$(pct 0.9 <"$work/slurm-gang")" --argjson g99 "$(pct 0.99 <"$work/slurm-gang")" \
   --argjson ln "$(wc -l <"$work/slurm-lat1")" --argjson gn "$(wc -l <"$work/slurm-gang")" \
   '{latency_1_task: {samples: $ln, task_start_ms_p50: $l50, task_start_ms_p90: $l90, task_start_ms_p99: $l99},
     latency_gang: {samples: $gn, task_start_ms_p50: $g50, task_start_ms_p90: $g90, task_start_ms_p99: $g99},
     throughput: (if $n == 0 then null else {jobs: $n, submitted: $submitted, started: $started,
                  submitted_per_s: ($n / ($t_sub - $t0)), started_per_s: ($n / ($last - $t0)),
                  finished_per_s: ($n / ($t_done - $t0)), all_finished_seconds: ($t_done - $t0)} end)}' \
   >"$work/slurm.json"

# Full cluster (QUEUED > 0): the same scenario as rota_job_launch --queued: every GPU
# busy, QUEUED one-GPU jobs behind them, then FILLS occupants end one at a time (each
# waits on a FIFO); fill = the occupant's last line -> the first line of the job that
# took its GPU (both the jobs' own `date`).
if [ "$QUEUED" -gt 0 ]; then
  trig="$out/go"; mkdir -p "$trig"
  : >"$work/slurm-occ-ids"
  for i in $(seq 0 15); do
    if [ "$i" -lt "$FILLS" ]; then
      mkfifo -m 0666 "$trig/go-$i"  # a blocking read, not a polling loop that loads the machine
      script="date +%s.%N; read line < $trig/go-$i; date +%s.%N"
    else
      script='date +%s.%N; exec sleep 3600'
    fi
    sbatch --parsable --gres=gpu:1 -o "$out/occ-$i.out" --wrap "$script" >>"$work/slurm-occ-ids"
  done
  while [ "$(squeue -h -t R -o %i | wc -l)" -lt 16 ]; do sleep 0.1; done
  tq0=$(now)
  seq "$QUEUED" | xargs -P "$CLIENTS" -I{} sbatch --parsable --gres=gpu:1 -o "$out/q-%j.out" \
      --wrap 'date +%s.%N; exec sleep 3600' >"$work/slurm-q-ids"
  tq1=$(now)
  : >"$work/slurm-fill"; : >"$work/slurm-seen"
  for f in $(seq 0 $((FILLS - 1))); do
    timeout 600 sh -c "echo > $trig/go-$f"
    until [ "$(wc -l <"$out/occ-$f.out")" -ge 2 ]; do sleep 0.01; done
    end=$(tail -1 "$out/occ-$f.out")
    new=""
    for _ in $(seq 6000); do  # at most ~10 min
      for id in $(squeue -h -t R -o %i); do
        if ! grep -qx "$id" "$work/slurm-seen" && [ -s "$out/q-$id.out" ]; then new=$id; break; fi
      done
      [ -n "$new" ] && break; sleep 0.02
    done
    [ -n "$new" ] || { echo "Slurm: no job took the GPU of occupant $f" >&2; break; }
    echo "$new" >>"$work/slurm-seen"
    awk -v a="$end" -v b="$(head -1 "$out/q-$new.out")" 'BEGIN {printf "%.1f\n", (b - a) * 1000}' >>"$work/slurm-fill"
  done
  scancel $(cat "$work/slurm-q-ids" "$work/slurm-occ-ids") 2>/dev/null || true
  slurm_drain
  jq --argjson n "$QUEUED" --argjson tq0 "$tq0" --argjson tq1 "$tq1" \
     --argjson f50 "$(pct 0.5 <"$work/slurm-fill")" --argjson fmax "$(pct 1 <"$work/slurm-fill")" \
     --argjson fills "$(wc -l <"$work/slurm-fill")" \
     '. + {queued: {jobs: $n, submitted_per_s: ($n / ($tq1 - $tq0)), fills: $fills,
                    fill_ms_p50: $f50, fill_ms_max: $fmax}}' "$work/slurm.json" >"$work/slurm-q.json"
  mv "$work/slurm-q.json" "$work/slurm.json"
fi
echo "slurm: $(jq -c . "$work/slurm.json")"

# ---------------------------------------------------------------- table -------
jq -rn --slurpfile r "$work/rota.json" --slurpfile s "$work/slurm.json" '
  def f: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
  def minus(a; b): if a and b then a - b else null end;
  def row(name; a; b; better): "\(name)\t\(a | f)\t\(b | f)\t\(if a and b and a > 0 and b > 0 then
        ((if better == "lower" then b / a else a / b end) * 10 | round / 10 | tostring) + "x" else "-" end)";
  ($r[0]) as $r | ($s[0]) as $s |
  "metric\trota\tslurm\trota advantage",
  row("1-task submit->running p50 ms (rota: API state)"; $r.latency_1_task.running_ms_p50; $s.latency_1_task.task_start_ms_p50; "lower"),
  row("1-task submit->process start p50 ms"; $r.latency_1_task.task_start_ms_p50; $s.latency_1_task.task_start_ms_p50; "lower"),
  row("gang submit->running p50 ms (rota: API state)"; $r.latency_gang.running_ms_p50; $s.latency_gang.task_start_ms_p50; "lower"),
  row("gang submit->all processes started p50 ms"; $r.latency_gang.task_start_ms_p50; $s.latency_gang.task_start_ms_p50; "lower"),
  row("gang above the machine floor p50 ms (minus the row below)"; minus($r.latency_gang.task_start_ms_p50; $r.spawn_floor.gang_ms_p50); minus($s.latency_gang.task_start_ms_p50; $r.spawn_floor.gang_ms_p50); "lower"),
  "machine floor, gang: the same commands by posix_spawn p50 ms\t\($r.spawn_floor.gang_ms_p50 | f)\t\t",
  "machine floor, 1 task p50 ms\t\($r.spawn_floor.task_1_ms_p50 | f)\t\t",
  "machine: /bin/true spawned and reaped ms\t\(if $r.spawn_floor then $r.spawn_floor.spawn_true_ms * 100 | round / 100 else "-" end)\t\t",
  row("submitted jobs/s"; $r.throughput.submitted_per_s; $s.throughput.submitted_per_s; "higher"),
  row("started jobs/s"; $r.throughput.started_per_s; $s.throughput.started_per_s; "higher"),
  row("finished jobs/s"; $r.throughput.finished_per_s; $s.throughput.finished_per_s; "higher"),
  row("queued: submitted jobs/s"; $r.queued.submitted_per_s; $s.queued.submitted_per_s; "higher"),
  row("queued: freed GPU taken p50 ms"; $r.queued.fill_ms_p50; $s.queued.fill_ms_p50; "lower"),
  row("queued: freed GPU taken max ms"; $r.queued.fill_ms_max; $s.queued.fill_ms_max; "lower")' | column -t -s $'\t'
