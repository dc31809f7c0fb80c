#!/usr/bin/env bash
# tests/sweep_bad.sh: every bad sweep spec in tests/bad/sweep/ must be
# rejected by `cubesim sweep --list` with exit status 2 and the located
# messages the case states; every spec shipped in sweeps/ must pass.
#
# Convention (tests/bad/README.md, as for topologies): a case is NAME.yaml
# with its expectations in comment lines, or in NAME.expect when the YAML
# cannot carry them (an empty file; a missing file):
#   # expect: TEXT         stderr contains TEXT (fixed string, any line)
#   # expect-count: N      stderr has exactly N lines containing ": error: "
#   # args: ARGS...        extra arguments before the file
# Environment: CUBESIM_BIN (the binary), CUBESIM_SOURCE_DIR (the tree).
set -u

bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
src=${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}
cd "$src" || exit 1
dir=tests/bad/sweep
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n_cases=0
n_failed=0

fail() {
        echo "FAIL $1: $2"
        n_failed=$((n_failed + 1))
}

# run_case NAME TARGET SPEC: check TARGET with the expectations in SPEC.
run_case() {
        local name=$1 target=$2 spec=$3
        n_cases=$((n_cases + 1))
        local args=() line want count n_expect=0
        line=$(grep -m1 '^# args: ' "$spec" | sed 's/^# args: //')
        if [ -n "$line" ]; then
                read -r -a args <<<"$line"
        fi
        timeout 20 "$bin" sweep --list "${args[@]}" "$target" >"$tmp/out" 2>"$tmp/err"
        local rc=$?
        if [ "$rc" -ne 2 ]; then
                fail "$name" "exit status $rc, expected 2"
                sed 's/^/    /' "$tmp/err" | head -20
                return
        fi
        if [ -s "$tmp/out" ]; then
                fail "$name" "stdout is not empty"
        fi
        while IFS= read -r want; do
                n_expect=$((n_expect + 1))
                if ! grep -qF -- "$want" "$tmp/err"; then
                        fail "$name" "stderr lacks: $want"
                        sed 's/^/    got: /' "$tmp/err" | head -20
                fi
        done < <(grep '^# expect: ' "$spec" | sed 's/^# expect: //')
        if [ "$n_expect" -eq 0 ]; then
                fail "$name" "states no '# expect:' line"
        fi
        count=$(grep -m1 '^# expect-count: ' "$spec" | sed 's/^# expect-count: //')
        if [ -n "$count" ]; then
                local got
                got=$(grep -c ': error: ' "$tmp/err")
                if [ "$got" -ne "$count" ]; then
                        fail "$name" "$got error lines, expected $count"
                        sed 's/^/    got: /' "$tmp/err" | head -20
                fi
        fi
}

for f in "$dir"/*.yaml; do
        name=$(basename "$f" .yaml)
        spec=$f
        [ -f "$dir/$name.expect" ] && spec=$dir/$name.expect
        run_case "$name" "$f" "$spec"
done
for e in "$dir"/*.expect; do
        name=$(basename "$e" .expect)
        [ -f "$dir/$name.yaml" ] || run_case "$name" "$dir/$name.yaml" "$e"
done

# Generated: a spec over the 1 MiB cap (all comment, so only the cap can reject it).
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$tmp/huge_spec.yaml"
printf '# expect: huge_spec.yaml: error: the spec is larger than 1024 KiB\n# expect-count: 1\n' \
        >"$tmp/huge_spec.expect"
run_case huge_spec "$tmp/huge_spec.yaml" "$tmp/huge_spec.expect"

# The shipped specs are good.
for f in sweeps/*.yaml; do
        n_cases=$((n_cases + 1))
        if ! "$bin" sweep --list "$f" >"$tmp/out" 2>"$tmp/err"; then
                fail "$f" "a shipped sweep spec is rejected"
                sed 's/^/    /' "$tmp/err" | head -20
        fi
done

# The command's own usage errors: exit 2 with a hint.
cli_case() {  # cli_case STATUS NEEDLE ARGS...
        local want=$1 needle=$2
        shift 2
        n_cases=$((n_cases + 1))
        "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
        local rc=$?
        if [ "$rc" -ne "$want" ]; then
                fail "cubesim $*" "exit status $rc, expected $want"
        elif ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
                fail "cubesim $*" "output lacks: $needle"
        fi
}
cli_case 2 "unknown option '--jbos'; did you mean '--jobs'?" sweep sweeps/gemm_sizes.yaml --jbos 2
cli_case 2 "--jobs 0: expected an integer in [1, 1024]" sweep sweeps/gemm_sizes.yaml --jobs 0
cli_case 2 "which spec?" sweep
cli_case 2 "unexpected argument 'b.yaml' (one spec at a time)" sweep a.yaml b.yaml
cli_case 0 "usage: cubesim sweep SPEC.yaml" sweep --help
cli_case 0 "panel gemm_sizes: kernel gemm, 8 points" sweep --list sweeps/gemm_sizes.yaml

echo "sweep_bad: $n_cases cases, $n_failed failures"
[ "$n_failed" -eq 0 ]
