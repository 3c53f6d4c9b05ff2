#!/usr/bin/env bash
# The Debian packages installed for real (docs/packaging.md): builds them from BUILD_DIR's
# rota (scripts/build-debs.sh --lintian), installs them with apt into a fresh Debian 12
# minbase root (debootstrap; kept as a tarball in BUILD_DIR for the next run), checks the
# maintainer scripts' work (user, directories, conffiles, modes), then starts rota-server
# and rota-agent there with their units' ExecStart lines (PID 1 is not systemd: chroot, in
# a mount namespace of its own so nothing stays mounted), joins the node with
# `rota agent join` and runs a job end to end as a Unix user of the new system.
# It installs the packages first with a lower version (the same build repacked as
# VERSION~old1), starts a job of 8 tasks, stops the agent and server as systemd does on an
# upgrade (SIGTERM to the main process only: KillMode=process), upgrades to the real
# packages, starts the new ones and checks that the 8 tasks were adopted and the job
# succeeded without a restart.
#
#   tests/package_test.sh BUILD_DIR
# Needs root, debootstrap, debhelper, lintian and Debian's mirror. Exit 77: skipped.
set -euo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
skip() {
  if [ "${ROTA_REQUIRE_ROOT_TESTS:-0}" = 1 ]; then echo "FAIL: $*" >&2; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
for tool in debootstrap dpkg-buildpackage dh lintian unshare; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh --test)"
done

work=$(mktemp -d /tmp/rota-package-test.XXXXXX)
cleanup() {
  # The servers started in the chroot die with the namespace's init (unshare --fork
  # --kill-child); what is left is files.
  rm -rf "$work"
}
trap cleanup EXIT
t0=$(date +%s%N)
lap() { awk -v a="$t0" -v b="$(date +%s%N)" -v what="$1" 'BEGIN { printf "%-34s %6.1f s\n", what, (b - a) / 1e9 }'; }

# 1. The packages, linted.
"$src/scripts/build-debs.sh" --build-dir "$build" --out "$work/debs" --lintian
lap "packages built and linted"

# 2. A fresh Debian 12 root (the debootstrap of an earlier run, when there is one).
root="$work/root"
cache="$build/package-test/bookworm-minbase.tar"
mkdir -p "$root" "$(dirname "$cache")"
if [ -f "$cache" ]; then
  tar -C "$root" -xf "$cache"
else
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  tar -C "$root" -cf "$cache.tmp" . && mv "$cache.tmp" "$cache"
fi
lap "Debian 12 root ready"

# 3. Everything else runs inside a mount namespace (its mounts vanish with it) and the
#    chroot; the namespace's processes die with this script's child (--kill-child).
# The same packages with a lower version: the "old" release the test upgrades from.
mkdir -p "$root/tmp/new" "$root/tmp/old"
cp "$work"/debs/rota_*.deb "$work"/debs/rota-server_*.deb "$work"/debs/rota-agent_*.deb "$root/tmp/new/"
version=$(dpkg-deb -f "$root"/tmp/new/rota_*.deb Version)
for deb in "$root"/tmp/new/*.deb; do
  x="$work/repack"; rm -rf "$x"; dpkg-deb -R "$deb" "$x"
  sed -i -e "s/^Version: .*/Version: ${version}~old1/" -e "/^Depends:/s/(\(>=\|<<\) $version/(\1 ${version}~old1/g" "$x/DEBIAN/control"
  dpkg-deb -Zgzip -z1 -b "$x" "$root/tmp/old/$(basename "$deb")" >/dev/null
done
lap "old version repacked"
cat >"$root/tmp/scenario.sh" <<'SCENARIO'
#!/bin/sh
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
unit_exec() {  # the ExecStart line of a unit, as systemd would run it
  sed -n 's/^ExecStart=//p' "/lib/systemd/system/$1"
}
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends /tmp/old/rota_*.deb /tmp/old/rota-server_*.deb /tmp/old/rota-agent_*.deb \
  >/tmp/apt.log 2>&1 || { tail -30 /tmp/apt.log; fail "apt-get install of the packages"; }
# What the maintainer scripts did.
getent passwd rota >/dev/null || fail "no rota system user"
[ "$(stat -c %U:%a /var/lib/rota)" = rota:750 ] || fail "/var/lib/rota is $(stat -c %U:%a /var/lib/rota)"
[ "$(stat -c %a /etc/rota/agent.yaml)" = 600 ] || fail "/etc/rota/agent.yaml is not 0600"
[ "$(stat -c %G:%a /etc/rota/server.yaml)" = rota:640 ] || fail "/etc/rota/server.yaml is not root:rota 0640"
dpkg-query -W -f='${Conffiles}\n' rota-server rota-agent | grep -q '/etc/rota/server.yaml' || fail "server.yaml is no conffile"
dpkg-query -W -f='${Conffiles}\n' rota-server rota-agent | grep -q '/etc/rota/agent.yaml' || fail "agent.yaml is no conffile"
[ -x /usr/lib/rota/rota-task-shim ] || fail "no task shim"
echo "installed: $(dpkg-query -W -f='${Package} ${Version}, ' rota rota-server rota-agent)"

# rota-server.service: User=rota, the unit's ExecStart; a free port instead of 8080
# (this machine's network is shared) as an Environment= drop-in would set it.
server_cmd=$(unit_exec rota-server.service)
start_server() {
  ROTA_LISTEN=127.0.0.1:0 ROTA_PASSWORD_HASH_COST=min setpriv --reuid rota --regid rota --init-groups \
    $server_cmd >>/tmp/server.log 2>&1 &
  server_pid=$!
}
start_server
for i in $(seq 100); do [ -s /var/lib/rota/server.url ] && break; sleep 0.1; done
[ -s /var/lib/rota/server.url ] || { cat /tmp/server.log; fail "the server did not start"; }
url=$(cat /var/lib/rota/server.url)
[ "$(stat -c %U /var/lib/rota/rota.db)" = rota ] || fail "the store is not the rota user's"

# rota-agent: joined with the server's token; the simulated NVML stands in for a GPU.
rota agent join "$url" --token "$(cat /var/lib/rota/join-token)" --name pkg-node | tee /tmp/join.out
grep -q "systemd is not running here" /tmp/join.out || fail "join did not say how to start the agent"
cat >>/etc/rota/agent.yaml <<AGENTCONF
nvml_library: /usr/lib/rota/sim/libnvidia-ml.so.1
interval: 0.5s
AGENTCONF
gpu='{"model": "NVIDIA A100-SXM4-80GB", "memory_mib": 81920, "power_limit_w": 400, "idle_power_w": 50}'
echo "{\"node\": \"pkg-node\", \"default_node\": true, \"tasks_under\": \"/var/lib/rota-agent\", \"gpus\": [$gpu, $gpu, $gpu, $gpu, $gpu, $gpu, $gpu, $gpu]}" \
  >/etc/rota/sim-nvml.json
agent_cmd=$(unit_exec rota-agent.service)
start_agent() {
  ROTA_SIM_NVML_CONFIG=/etc/rota/sim-nvml.json $agent_cmd >>/tmp/agent.log 2>&1 &
  agent_pid=$!
}
start_agent

# A user of the new system runs a job on the node.
useradd -m alice
export ROTA_SERVER="$url"
cat /var/lib/rota/initial-admin-password | rota login -u admin >/dev/null || fail "admin login"
echo "alice-password-123" | rota user add alice --unix-user alice --password-stdin >/dev/null || fail "user add"
for i in $(seq 100); do rota nodes 2>/dev/null | grep -q 'pkg-node' && break; sleep 0.2; done
rota nodes | grep -q 'pkg-node' || { cat /tmp/agent.log; fail "the node did not join"; }
su alice -c "cd && echo alice-password-123 | ROTA_SERVER=$url rota login -u alice >/dev/null" || fail "alice login"
su alice -c "cd && ROTA_SERVER=$url rota run --name pkg-hello --workdir /tmp --wait -- sh -c 'echo hello from \$(id -un)'" \
  >/tmp/run.out 2>&1 || { cat /tmp/run.out /tmp/agent.log; fail "the job did not succeed"; }
grep -q succeeded /tmp/run.out || { cat /tmp/run.out; fail "no 'succeeded'"; }
job=$(su alice -c "cd && ROTA_SERVER=$url rota jobs -o json" | grep -o '"id": *[0-9]*' | head -1 | grep -o '[0-9]*$')
su alice -c "cd && ROTA_SERVER=$url rota logs $job" | grep -q "hello from alice" || fail "the job's log lacks its output"
echo "job $job ran as alice on pkg-node"

# The upgrade, with a job of 8 tasks running.
su alice -c "cd && ROTA_SERVER=$url rota run --name pkg-long --workers 8 --gpus-per-task 1 --workdir /tmp -- sh -c 'sleep 12; echo task \$ROTA_TASK_INDEX done'" \
  >/tmp/long.out 2>&1 || { cat /tmp/long.out; fail "submitting the 8-task job"; }
long=$(su alice -c "cd && ROTA_SERVER=$url rota jobs -o json" | grep -o '"id": *[0-9]*' | grep -o '[0-9]*$' | sort -n | tail -1)
show() { su alice -c "cd && ROTA_SERVER=$url rota job show $long -o json"; }
for i in $(seq 100); do [ "$(show | grep -c '"state": "running"')" -ge 9 ] && break; sleep 0.2; done
[ "$(show | grep -c '"state": "running"')" -ge 9 ] || { show; fail "the 8 tasks did not start"; }
# What systemd does to each unit on upgrade: SIGTERM to the main process (KillMode=process).
kill -TERM "$agent_pid" "$server_pid"
wait "$agent_pid" "$server_pid" || true
apt-get install -y -q --no-install-recommends /tmp/new/rota_*.deb /tmp/new/rota-server_*.deb /tmp/new/rota-agent_*.deb \
  >/tmp/apt-upgrade.log 2>&1 || { tail -30 /tmp/apt-upgrade.log; fail "apt-get install of the upgrade"; }
dpkg-query -W -f='${Version}' rota-agent | grep -q old && fail "rota-agent was not upgraded"
grep -q "^server: $url" /etc/rota/agent.yaml || fail "the upgrade replaced the joined agent.yaml"
rm -f /var/lib/rota/server.url
start_server
for i in $(seq 100); do [ -s /var/lib/rota/server.url ] && break; sleep 0.1; done
url=$(cat /var/lib/rota/server.url)
sed -i "s|^server: .*|server: $url|" /etc/rota/agent.yaml  # the new server's port (a test artefact)
start_agent
for i in $(seq 150); do show | grep -q '"state": "succeeded"' && break; sleep 0.2; done
show | grep -q '"state": "succeeded"' || { show; tail -20 /tmp/agent.log; fail "the 8-task job did not survive the upgrade"; }
show | grep -q '"restart_count": 0' || { show; fail "the job was restarted"; }
# Task ids name the run (job-N.r0.worker-I): all 8 of the first run, each exited 0.
[ "$(show | grep -c '"id": "job-[0-9]*\.r0\.worker-')" = 8 ] || { show; fail "not 8 tasks of the first run"; }
show | grep -q '"id": "job-[0-9]*\.r[1-9]' && { show; fail "a task was started again"; }
[ "$(show | grep -c '"exit_code": 0')" = 8 ] || { show; fail "not every task exited 0"; }
[ "$(grep -c ': adopted' /tmp/agent.log)" -ge 8 ] || fail "the new agent did not adopt the 8 tasks"
for i in 0 1 2 3 4 5 6 7; do
  su alice -c "cd && ROTA_SERVER=$url rota logs $long --task worker-$i" | grep -qx "task $i done" ||
    fail "task $i's output is not in its log"
done
echo "upgrade $(dpkg-query -W -f='${Version}' rota) with 8 tasks running: 0 lost, 0 restarts"
SCENARIO
chmod +x "$root/tmp/scenario.sh"
cp /etc/resolv.conf "$root/etc/resolv.conf"
unshare --mount --propagation private --pid --fork --kill-child sh -c "
  set -e
  mount -t proc proc '$root/proc'
  mount --rbind /sys '$root/sys'; mount --make-rslave '$root/sys'
  mount --rbind /dev '$root/dev'; mount --make-rslave '$root/dev'
  chroot '$root' /tmp/scenario.sh"
lap "installed, served, job ran"
