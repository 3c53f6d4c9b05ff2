#!/usr/bin/env bash
# Builds rota's Debian packages (rota, rota-server, rota-agent; docs/packaging.md) with
# debhelper: dpkg-buildpackage -b -uc -us, the .debs written to OUT_DIR (default dist/).
#
#   scripts/build-debs.sh [--build-dir DIR] [--out DIR] [--lintian]
#
# --build-dir DIR packages the rota binary of an already built tree (`--target rota`; CI packages
# its release build) instead of building the tree again in obj-rota/. --lintian runs
# lintian on the result (fails on errors and warnings; the overrides are explained in
# debian/*.lintian-overrides). Needs: scripts/install-deps.sh, debhelper, fakeroot (and lintian).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build_dir=""
out="$src/dist"
lint=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$(cd "$2" && pwd); shift 2 ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift 2 ;;
    --lintian) lint=1; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--out DIR] [--lintian]" >&2; exit 2 ;;
  esac
done
for tool in dpkg-buildpackage dh fakeroot; do
  command -v "$tool" >/dev/null || { echo "$0: $tool missing: apt-get install debhelper fakeroot dpkg-dev" >&2; exit 2; }
done

# dpkg-buildpackage writes its results beside the source tree: build from a copy of
# the tracked files (with any prebuilt tree named by path) so that the checkout stays clean.
work=$(mktemp -d /tmp/rota-debs.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/rota"
git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$work/rota")
env=()
if [ -n "$build_dir" ]; then
  env=(ROTA_PREBUILT=1 "ROTA_BUILD_DIR=$build_dir")
fi
(cd "$work/rota" && env "${env[@]}" dpkg-buildpackage -b -uc -us --no-sign >"$work/build.log" 2>&1) || {
  tail -60 "$work/build.log" >&2
  echo "$0: dpkg-buildpackage failed (log above)" >&2
  exit 1
}
mkdir -p "$out"
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/ 2>/dev/null || true
cp "$work"/*.ddeb "$out"/ 2>/dev/null || true
ls "$out"/*.deb
if [ "$lint" = 1 ]; then
  command -v lintian >/dev/null || { echo "$0: lintian missing: apt-get install lintian" >&2; exit 2; }
  # Errors and warnings fail; informational tags are shown.
  lintian --fail-on error,warning --info --suppress-tags-from-file /dev/null "$out"/*.changes
fi
