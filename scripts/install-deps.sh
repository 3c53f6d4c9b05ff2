#!/usr/bin/env bash
# Installs the Debian packages rota needs to build (and package: debhelper) and run its demo (Node.js and
# npm build the web UI: Debian's nodejs 18 when no Node.js >= 18 is on the PATH);
# with --test also what the test suite runs against (Debian's PyTorch, ~800 MB,
# OpenSSH's sshd for the agentless-node tests, Debian's Chromium for the UI tests,
# PostgreSQL's server programs for the store tests: no cluster is created or started,
# the tests start their own).
# Idempotent: packages already present are skipped; apt's lock is retried.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-system-dev
  nlohmann-json3-dev libsimdjson-dev libsqlite3-dev libpq-dev libcli11-dev libyaml-cpp-dev
  libcurl4-openssl-dev libssl-dev libsodium-dev libjemalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  prometheus procps
  python3-aiosmtpd openssl openssh-client curl
  debhelper fakeroot dpkg-dev
)
# The web UI (web/) is built with Node.js >= 18 and npm; keep a newer Node.js that is
# already installed (e.g. a nodesource build, which ships its own npm).
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 18 ] || ! command -v npm >/dev/null; then
  PACKAGES+=(nodejs npm)
fi
if [ "${1:-}" = "--test" ]; then
  # clang + its sanitizer runtimes: the ThreadSanitizer and lock-annotation build, and
  # libFuzzer (libclang-rt-14-dev) for the fuzz build.
  # iproute2: network namespaces in the node-loss tests.
  # tmux: rota top on a real terminal (tests/top_tmux_test.cc).
  # chromium: the web UI's end-to-end tests drive Debian's browser (never a downloaded one).
  # postgresql: initdb, pg_ctl and the server for the store tests on PostgreSQL;
  # pg_auto_failover (postgresql-15-auto-failover, pg-auto-failover-cli): a highly
  # available PostgreSQL that fails over under a running server (tests/pg_auto_failover.sh).
  # lintian, debootstrap, systemd (systemd-analyze): the Debian packages' checks and their
  # install into a fresh Debian 12 root (tests/package_test.sh).
  PACKAGES+=(python3-torch openssh-server tmux clang libclang-rt-14-dev iproute2 chromium postgresql
             postgresql-15-auto-failover pg-auto-failover-cli lintian debootstrap systemd)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_retry() {
  for i in $(seq 1 30); do
    if $SUDO env DEBIAN_FRONTEND=noninteractive "$@"; then return 0; fi
    echo "apt busy or failed (attempt $i), retrying in 5 s..." >&2
    sleep 5
  done
  return 1
}

# Debian's postgresql-common creates and starts a `main` cluster when a server package is
# installed, unless its createcluster.conf says not to. The tests start servers of their
# own: none is wanted (nor systemd to run it). Written before the install, idempotently:
# a drop-in that the default createcluster.conf includes, and the file itself when the
# package has not put one there yet (kept over the package's by --force-confold).
if [[ " ${missing[*]} " == *" postgresql "* ]]; then
  $SUDO mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/rota.conf >/dev/null
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
fi

echo "Installing: ${missing[*]}" >&2
apt_retry apt-get update -q
apt_retry apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
