#!/usr/bin/env bash
# tests/cli_bad.sh: every bad command line in tests/bad/cli/ must be
# rejected with the exit status and the messages the case states: bad
# options of every command, bad --set values for kernels and topologies,
# unusable files and directories, a machine too large for the host.
#
# Convention (tests/bad/README.md): a case is NAME.case, comment lines only:
#   # args: ARGS...        the arguments after `cubesim`, split as the shell
#                          does (quotes work; @TMP@ is a scratch directory)
#   # expect: TEXT         stdout or stderr contains TEXT (fixed string; repeatable)
#   # expect-count: N      stderr has exactly N lines containing "error: "
#   # status: N            the exit status (default 2, bad input)
#   # copy: SRC DEST       copy SRC (from the tree) to @TMP@/DEST first (repeatable)
#   # env: NAME=VALUE      set in the environment of the run (repeatable)
#   # ulimit-v: KIB        run under `ulimit -v KIB` (skipped under ASan, whose
#                          shadow memory needs more address space)
#   # xfail: WHY           a known gap, reported to its owner: the case must
#                          still fail; once it passes, the script fails until
#                          the line is removed
# Every case states at least one `# expect:` line. The run has a 20 s
# timeout and must not print `AddressSanitizer`/`runtime error` reports.
# Environment: CUBESIM_BIN (the binary), CUBESIM_SOURCE_DIR (the tree),
# CUBESIM_BUILD_DIR (its build directory, to tell an ASan build).
set -u

bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
src=${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}
cd "$src" || exit 1
. "$src/tests/lib/check_run.sh"
dir=tests/bad/cli
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

sanitized=0
if [ -n "${CUBESIM_BUILD_DIR:-}" ] &&
        grep -q '^CUBESIM_SANITIZE:BOOL=ON' "$CUBESIM_BUILD_DIR/CMakeCache.txt" 2>/dev/null; then
        sanitized=1
fi

n_cases=0 n_failed=0 n_xfail=0 n_skipped=0

for spec in "$dir"/*.case; do
        name=${spec##*/}
        name=${name%.case}
        n_cases=$((n_cases + 1))
        parse_case "$spec" "#" 2
        tmp=$scratch/$name
        mkdir -p "$tmp"
        eval "args=(${args_line//@TMP@/$tmp})"
        for c in "${copies[@]}"; do
                read -r csrc cdst <<<"$c"
                mkdir -p "$(dirname "$tmp/$cdst")"
                cp "$csrc" "$tmp/$cdst"
        done
        if [ -n "$limit" ] && [ "$sanitized" -eq 1 ]; then
                echo "SKIP $name: ulimit -v under ASan"
                n_skipped=$((n_skipped + 1))
                continue
        fi
        if [ -n "$limit" ]; then
                (ulimit -v "$limit" && exec env "${envs[@]}" timeout 120 "$bin" "${args[@]}") \
                        >"$tmp/out" 2>"$tmp/err" </dev/null
        else
                env "${envs[@]}" timeout 120 "$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err" \
                        </dev/null
        fi
        check_run "$tmp" $? @TMP@ "$tmp"
        verdict "$name" "cubesim ${args[*]}" "$tmp"
done

echo "cli_bad: $n_cases cases, $n_failed failures, $n_xfail known gaps (xfail), $n_skipped skipped"
[ "$n_failed" -eq 0 ]
