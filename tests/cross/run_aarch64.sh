#!/usr/bin/env bash
# tests/cross/run_aarch64.sh: build tests/cross/engine_selftest.c with
# src/engine/coro.c for aarch64 and run it under qemu-user, then build it
# natively with the ucontext fallback and run that. Run from the source root
# (or set CUBESIM_SOURCE_DIR). Exits non-zero on any failure. A missing cross
# compiler or qemu is a skip (exit 0) unless CI is set, where it is a failure.
set -u

src=${CUBESIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cc_a64=${AARCH64_CC:-aarch64-linux-gnu-gcc}
qemu=${QEMU_AARCH64:-qemu-aarch64}
cc=${CC:-cc}
flags=(-std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes
       -Wmissing-prototypes -Werror -I "$src/src")
files=("$src/tests/cross/engine_selftest.c" "$src/src/engine/coro.c")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cubesim-cross.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# run NAME CMD...: run a self-test binary, require exit 0 and "0 failed".
run() {
        local name=$1 out
        shift
        if out=$("$@" 2>&1) && grep -q ' passed, 0 failed$' <<<"$out"; then
                printf '%s: %s\n' "$name" "$(tail -n 1 <<<"$out")"
        else
                printf '%s: FAILED\n%s\n' "$name" "$out" >&2
                failed=1
        fi
}

missing=()
command -v "$cc_a64" >/dev/null 2>&1 || missing+=("$cc_a64")
command -v "$qemu" >/dev/null 2>&1 || missing+=("$qemu")
if ((${#missing[@]})); then
        if [ -n "${CI:-}" ]; then
                echo "aarch64: FAILED: ${missing[*]} not found (required under CI)" >&2
                failed=1
        else
                echo "aarch64: skipped: ${missing[*]} not found"
        fi
elif "$cc_a64" "${flags[@]}" -static -o "$tmp/selftest-a64" "${files[@]}" -lm; then
        run "aarch64 (qemu)" "$qemu" "$tmp/selftest-a64"
else
        echo "aarch64: FAILED: cross build" >&2
        failed=1
fi

if "$cc" "${flags[@]}" -DCUBESIM_CORO_UCONTEXT -o "$tmp/selftest-uc" "${files[@]}" -lm; then
        run "native ucontext" "$tmp/selftest-uc"
else
        echo "native ucontext: FAILED: build" >&2
        failed=1
fi

exit "$failed"
