#!/usr/bin/env bash
# Build cubesim (optimised) and run the main job: the GQA headline bench on
# the built-in default machine. Results, figures and a report go to
# out/gqa_headline/ (or the directory given as the first argument).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
out=${1:-out/gqa_headline}
build/cubesim bench run milestone-gqa-headline --out "$out" --jobs "$jobs"
echo "results: $out/sweep.json; figures: $out/figures/; report: $out/report.md"
