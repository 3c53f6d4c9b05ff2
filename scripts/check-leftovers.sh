#!/usr/bin/env bash
# Fails (exit 1, printing `ps` lines) when processes that tests start are still
# running: run it after a test run, when no other test run is under way on the
# machine. Leftovers are
#   - processes of the Unix users that tests run processes as: nobody and the
#     users they create, named rota-* (rota-e2e-a, rota-e2e-b, rota-ssh-u,
#     rota-task-u);
#   - `rota` and `rota-task-shim` processes started from a build directory of
#     this tree;
#   - processes whose command line names a test's temporary directory
#     (/tmp/rota_it_*, /tmp/rota-task-test-*, /tmp/rota_remote_*,
#     /tmp/rota_process_*, /tmp/rota_pg_*, /tmp/rota_paf_*): sshd, ssh control masters, shells,
#     the store tests' PostgreSQL servers.
# Processes that are ending are given a moment (ROTA_LEFTOVER_GRACE seconds,
# default 5) to go before they count.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd -P)
grace=${ROTA_LEFTOVER_GRACE:-5}

test_uids=$(getent passwd | awk -F: '$1 == "nobody" || $1 ~ /^rota-/ { print $3 }')
temp_dirs='/tmp/(rota_it_|rota-task-test-|rota_remote_|rota_process_|rota_pg_|rota_paf_)'

# Prints the pids of leftover processes, one per line.
leftovers() {
  local d pid state uid exe cmd
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    state=$(awk '{ sub(/.*\) /, ""); print $1 }' "$d/stat" 2>/dev/null) || continue
    [ -z "$state" ] || [ "$state" = Z ] && continue  # gone, or a zombie: not running
    uid=$(awk '/^Uid:/ { print $2 }' "$d/status" 2>/dev/null) || continue
    exe=$(readlink "$d/exe" 2>/dev/null || true)
    exe=${exe% (deleted)}
    cmd=$( { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null || true)  # it may be gone by now
    if grep -qx "$uid" <<<"$test_uids" ||
       { [[ $exe == "$root"/* ]] && [[ ${exe##*/} == rota || ${exe##*/} == rota-task-shim ]]; } ||
       [[ $cmd =~ $temp_dirs ]]; then
      echo "$pid"
    fi
  done
}

deadline=$((SECONDS + grace))
while true; do
  pids=$(leftovers)
  [ -z "$pids" ] && exit 0
  [ "$SECONDS" -ge "$deadline" ] && break
  sleep 0.5
done
echo "check-leftovers: processes left running by tests:" >&2
# shellcheck disable=SC2086
ps -o pid,ppid,user,etime,args -p "$(echo $pids | tr ' ' ,)" >&2 || true
for pid in $pids; do  # which run left it: its working directory often tells
  echo "  $pid cwd: $(readlink "/proc/$pid/cwd" 2>/dev/null || echo '?')" >&2
done
exit 1
