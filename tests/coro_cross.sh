#!/usr/bin/env bash
# tests/coro_cross.sh: CTest entry for the coroutine cross tests: the
# aarch64 switch under qemu-user and the ucontext fallback (see
# tests/cross/run_aarch64.sh). Needs CUBESIM_SOURCE_DIR, set by the build.
set -eu
cd "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source root}"
exec bash tests/cross/run_aarch64.sh
