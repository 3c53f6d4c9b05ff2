#!/usr/bin/env bash
# Installs what is missing, builds rota, and runs the demo: `rota dev` (a server
# and 3 simulated GPU nodes on this machine). Extra arguments go to `rota dev`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROTA_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" --target rota nvidia_ml_sim -j"$(nproc)"
exec "$BUILD_DIR/bin/rota" dev "$@"
