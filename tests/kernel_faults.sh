#!/usr/bin/env bash
# tests/kernel_faults.sh: every kernel fault in tests/bad/kernels/ stops the
# run with the status and the message its case states, through the command
# line: each case is a user kernel (one NAME.c, compiled against
# include/cubesim/tl.h alone into a shared object, as tests/user_kernel.sh
# does) that `cubesim run NAME --kernels libNAME.so ARGS` must reject.
# Then a sweep over a kernel's faults must go on past its faulty points.
#
# Convention (tests/bad/README.md): directives are lines of the case's
# opening comment, written as C++ comments so the file stays C:
#   // args: ARGS...       arguments after the kernel's name (shell words)
#   // expect: TEXT        stdout or stderr contains TEXT (fixed string; repeatable);
#                          @LINE@ is the line of the case's `/* FAULT */` marker
#   // expect-count: N     stderr has exactly N lines containing "error: "
#   // status: N           the exit status (default 1: the kernel failed)
#   // cflags: FLAGS...    extra compiler flags (after the README's, which they may undo)
#   // xfail: WHY          a known gap, reported to its owner (see cli_bad.sh)
# Kernel errors name the kernel's file:line, the PE and the op; the file is
# compiled from the tree's root, so it reads tests/bad/kernels/NAME.c. Each
# run has a 60 s timeout and must not print a sanitizer report.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR; CC (default cc).
set -u

. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src" || exit 1
. "$src/tests/lib/check_run.sh"
dir=tests/bad/kernels
cc=${CC:-cc}

n_cases=0 n_failed=0 n_xfail=0

for spec in "$dir"/*.c; do
        name=${spec##*/}
        name=${name%.c}
        n_cases=$((n_cases + 1))
        lib=$tmp/lib$name.so
        parse_case "$spec" // 1
        eval "cflags=($cflags_line)"
        # The README's compile line for user kernels, plus the -Werror family.
        if ! $cc -std=c11 -O1 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC \
                -fstack-clash-protection "${cflags[@]}" \
                -I include "$spec" -o "$lib" 2>"$tmp/cc.err"; then
                echo "FAIL $name: does not compile"
                sed 's/^/    /' "$tmp/cc.err" | head -10
                n_failed=$((n_failed + 1))
                continue
        fi
        eval "args=($args_line)"
        timeout 60 "$bin" run "$name" --kernels "$lib" "${args[@]}" \
                >"$tmp/out" 2>"$tmp/err" </dev/null
        check_run "$tmp" $? @LINE@ "$at"
        verdict "$name" "cubesim run $name --kernels lib$name.so ${args[*]}" "$tmp"
done

# A sweep goes on past its faulty points: each is recorded with its status
# and error, the good one completes, and the sweep exits 1.
n_cases=$((n_cases + 1))
cat >"$tmp/faults.yaml" <<EOF
version: 1
name: faults
kernel: faulty
topology: $src/topologies/small.yaml
grid:
  fault: [none, view, deadlock, crash]
EOF
timeout 120 "$bin" sweep "$tmp/faults.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/sweep" \
        --jobs 2 --no-figures --no-progress >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
statuses=$(grep -o '"status": "[a-z_]*"' "$tmp/sweep/sweep.json" 2>/dev/null | cut -d'"' -f4 |
        tr '\n' ' ')
if [ "$rc" -ne 1 ] || [ "$statuses" != "ok failed failed crashed " ] ||
        ! grep -qF 'tests/bad/kernels/faulty.c' "$tmp/sweep/sweep.json" ||
        ! grep -qF 'deadlock' "$tmp/sweep/sweep.json"; then
        echo "FAIL sweep past faulty points: exit $rc (expected 1), statuses '$statuses'" \
                "(expected 'ok failed failed crashed ')"
        sed 's/^/    got: /' "$tmp/out" "$tmp/err" | head -12
        n_failed=$((n_failed + 1))
fi

echo "kernel_faults: $n_cases cases, $n_failed failures, $n_xfail known gaps (xfail)"
[ "$n_failed" -eq 0 ]
