#!/usr/bin/env bash
# Build cubesim with warnings as errors and run the whole test suite; then
# build again with AddressSanitizer + UndefinedBehaviorSanitizer and run the
# suite once more. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (warnings as errors) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUBESIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build (ASan + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCUBESIM_WERROR=ON -DCUBESIM_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests under ASan + UBSan =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan --output-on-failure -j "$jobs"
