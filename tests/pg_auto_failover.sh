#!/bin/bash
# A highly available PostgreSQL for tests, with Debian's pg_auto_failover
# (postgresql-15-auto-failover): a monitor and two nodes (primary + synchronous
# secondary) on loopback ports, in DIR, run as `postgres` when called as root.
#
#   pg_auto_failover.sh start DIR     prints the libpq URI of the formation
#                                     (user postgres, both nodes,
#                                     target_session_attrs=read-write)
#                                     once a primary and a secondary are reported
#   pg_auto_failover.sh failover DIR  once the secondary is synchronous and has flushed
#                                     all the primary had written, the monitor
#                                     promotes it; returns when the new primary is
#                                     reported
#   pg_auto_failover.sh state DIR     the monitor's table of nodes
#   pg_auto_failover.sh events DIR    the monitor's last events (what each node did)
#   pg_auto_failover.sh stop DIR      stops everything (immediate) and removes DIR
#
# Exit 3 (and a line on stderr) when pg_autoctl is not installed.
set -euo pipefail

cmd=${1:?usage: pg_auto_failover.sh start|failover|state|stop DIR}
dir=${2:?usage: pg_auto_failover.sh start|failover|state|stop DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if ! command -v pg_autoctl >/dev/null || [ -z "$bin" ]; then
  echo "pg_autoctl not found (Debian: apt-get install postgresql-15-auto-failover pg-auto-failover-cli)" >&2
  exit 3
fi
export PATH=$bin:$PATH XDG_CONFIG_HOME=$dir/cfg XDG_DATA_HOME=$dir/share XDG_RUNTIME_DIR=$dir/run
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- env PATH="$PATH" XDG_CONFIG_HOME="$XDG_CONFIG_HOME" \
      XDG_DATA_HOME="$XDG_DATA_HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$@"
  else
    "$@"
  fi
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
state() { as_pg pg_autoctl show state --pgdata "$dir/monitor" 2>/dev/null || true; }
# Waits up to $2 seconds until the monitor reports a primary and a secondary.
wait_pair() {
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    local s; s=$(state)
    if grep -Eq '\|[[:space:]]+primary[[:space:]]+\|[[:space:]]+primary$' <<<"$s" &&
       grep -Eq '\|[[:space:]]+secondary[[:space:]]+\|[[:space:]]+secondary$' <<<"$s"; then
      return 0
    fi
    sleep 0.5
  done
  echo "pg_auto_failover did not reach primary + secondary in $1 s:" >&2
  state >&2
  for f in "$dir"/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done
  return 1
}

sql() { as_pg psql -qAt -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2" 2>/dev/null; }
# Waits up to $1 seconds until the primary has a synchronous standby whose flushed WAL
# reaches the primary's WAL position taken at the start. Sets $standby (its port).
caught_up() {
  local deadline=$((SECONDS + $1)) primary="" lsn=""
  for n in 1 2; do
    local port; port=$(cat "$dir/node$n.port")
    if [ "$(sql "$port" 'SELECT NOT pg_is_in_recovery()')" = t ]; then primary=$port; else standby=$port; fi
  done
  if [ -z "$primary" ]; then echo "no node answers as primary" >&2; state >&2; return 1; fi
  lsn=$(sql "$primary" 'SELECT pg_current_wal_lsn()')
  while [ $SECONDS -lt $deadline ]; do
    local n; n=$(sql "$primary" "SELECT count(*) FROM pg_stat_replication
      WHERE sync_state IN ('sync', 'quorum') AND flush_lsn >= '$lsn'::pg_lsn")
    [ "${n:-0}" -ge 1 ] && return 0
    sleep 0.2
  done
  echo "no synchronous standby flushed $lsn in $1 s; synchronous_standby_names:" \
    "$(sql "$primary" 'SHOW synchronous_standby_names')" >&2
  sql "$primary" 'SELECT application_name, state, sync_state, flush_lsn FROM pg_stat_replication' >&2
  state >&2
  return 1
}

case $cmd in
  start)
    mkdir -p "$dir/cfg" "$dir/share" "$dir/run"
    [ "$(id -u)" = 0 ] && chown -R postgres: "$dir"
    mport=$(free_port)
    echo "$mport" > "$dir/monitor.port"
    cd "$dir"  # the services run here, so that stop finds them
    # setsid: the services outlive this script, each in a session of its own (stop kills them).
    setsid bash -c "$(declare -f as_pg); as_pg pg_autoctl create monitor --pgdata '$dir/monitor' \
      --pgport $mport --hostname 127.0.0.1 --auth trust --no-ssl --run" >"$dir/monitor.log" 2>&1 &
    echo $! >> "$dir/sessions"
    for _ in $(seq 1 120); do pg_isready -q -h 127.0.0.1 -p "$mport" && break; sleep 0.5; done
    monitor="postgres://autoctl_node@127.0.0.1:$mport/pg_auto_failover?sslmode=disable"
    for n in 1 2; do
      port=$(free_port)
      setsid bash -c "$(declare -f as_pg); as_pg pg_autoctl create postgres --pgdata '$dir/node$n' \
        --pgport $port --hostname 127.0.0.1 --auth trust --no-ssl --monitor '$monitor' \
        --name node$n --dbname rota --run" >"$dir/node$n.log" 2>&1 &
      echo $! >> "$dir/sessions"
      # The second node clones the first: let the first register as primary-to-be.
      [ $n = 1 ] && for _ in $(seq 1 120); do state | grep -q node1 && break; sleep 0.5; done
      echo "$port" > "$dir/node$n.port"
    done
    # The clone (pg_basebackup) waits for a spread checkpoint on the first node: minutes by
    # default. An immediate CHECKPOINT there makes it finish now.
    for _ in $(seq 1 120); do
      grep -q 'waiting for checkpoint' "$dir/node2.log" 2>/dev/null && break
      sleep 0.5
    done
    as_pg psql -q -h 127.0.0.1 -p "$(cat "$dir/node1.port")" -U postgres -d postgres \
      -c CHECKPOINT >/dev/null 2>&1 || true
    wait_pair 240
    uri=$(as_pg pg_autoctl show uri --pgdata "$dir/monitor" --formation default)
    uri=${uri/sslmode=prefer/sslmode=disable}
    echo "${uri/:\/\//://postgres@}"  # as PostgreSQL's superuser (trust on loopback)
    ;;
  failover)
    # A switchover loses nothing only from a stable pair whose primary commits
    # synchronously: pg_auto_failover turns synchronous replication off while the
    # secondary is unhealthy (wait_primary), and a loaded machine can make it so for a
    # moment. So first the pair, then a synchronous standby that has flushed everything
    # the primary had written when asked.
    wait_pair 120
    caught_up 60
    # Asked without waiting (pg_autoctl's own wait gives up after 60 s, exit 12, on a
    # loaded machine); then the standby must answer as the primary, and the pair be back.
    as_pg pg_autoctl perform failover --pgdata "$dir/monitor" --wait 0 >"$dir/failover.log" 2>&1
    deadline=$((SECONDS + 180))
    until [ "$(sql "$standby" 'SELECT NOT pg_is_in_recovery()')" = t ]; do
      if [ $SECONDS -ge $deadline ]; then
        echo "the standby (port $standby) was not promoted in 180 s:" >&2
        state >&2
        cat "$dir/failover.log" >&2
        exit 1
      fi
      sleep 0.2
    done
    wait_pair 180
    ;;
  state) state ;;
  events) as_pg pg_autoctl show events --pgdata "$dir/monitor" --count 40 2>&1 || true ;;
  stop)
    # Every process of the formation: the services' sessions, and whatever runs in DIR
    # (PostgreSQL's processes rename themselves and some start sessions of their own, but
    # each runs in its data directory). Killed until none is left, then DIR goes.
    for _ in $(seq 1 100); do
      pids=$(for sid in $(cat "$dir/sessions" 2>/dev/null); do pgrep -s "$sid"; done
             for p in /proc/[0-9]*; do
               case $(readlink "$p/cwd" 2>/dev/null) in "$dir"|"$dir"/*) echo "${p#/proc/}" ;; esac
             done)
      [ -z "$pids" ] && break
      kill -KILL $pids 2>/dev/null || true
      sleep 0.1
    done
    rm -rf "$dir"
    ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
