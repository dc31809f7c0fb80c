#!/usr/bin/env bash
# Build cubesim (optimised) and run the headline bench on the built-in
# default machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"
out=${1:-out/engine}
mkdir -p "$out"
echo "== engine-hold (procs=100, iters=200000) =="
build/cubesim bench run engine-hold --set procs=100 --set iters=200000 --json | tee "$out/engine-hold.json"
echo "== engine-phold (lps=1024, pop=8, events=10M) =="
build/cubesim bench run engine-phold --json | tee "$out/engine-phold.json"
echo "results in $out/"
