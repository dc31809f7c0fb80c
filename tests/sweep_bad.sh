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

. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src" || exit 1
dir=tests/bad/sweep

. "$src/tests/lib/bad_corpus.sh"

corpus_run() {
        timeout 120 "$bin" sweep --list "$@"
}

corpus_stdout_bad() {
        [ -s "$1" ]
}

run_corpus "$dir"

# Generated: a spec over the 1 MiB cap (all comment, so only the cap can reject it).
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$tmp/huge_spec.yaml"
printf '# expect: huge_spec.yaml: error: the spec is larger than 1024 KiB\n# expect-count: 1\n' \
        >"$tmp/huge_spec.expect"
run_case huge_spec "$tmp/huge_spec.yaml" "$tmp/huge_spec.expect"

# The shipped specs are good.
# An axis of 100,000 values is over the YAML node cap, with sweep wording.
{
        printf 'version: 1\nname: axis\nkernel: gemm\ngrid:\n  m: ['
        seq -s ', ' 1 100000 | tr -d '\n'
        printf ']\n'
} >"$tmp/huge_axis.yaml"
printf '%s\n' '# expect: huge_axis.yaml:5:' \
        '# expect: error: too many YAML nodes (more than 100000); a sweep has at most 100000 points: give many as a grid (its axes multiply) rather than listed, or split the sweep into several specs' \
        '# expect-count: 1' >"$tmp/huge_axis.expect"
run_case huge_axis "$tmp/huge_axis.yaml" "$tmp/huge_axis.expect"

# A spec without a name takes its file's stem, which must be a name too.
mkdir -p "$tmp/stem"
printf 'version: 1\nkernel: gemm\ngrid:\n  m: [64]\n' >"$tmp/stem/..yaml"
printf '%s\n' "# expect: ..yaml:1:1: error: the spec has no 'name:' and its file name '.' starts with '.'" \
        '# expect-count: 1' >"$tmp/stem.expect"
run_case stem_dot "$tmp/stem/..yaml" "$tmp/stem.expect"

for f in sweeps/*.yaml; do
        n_cases=$((n_cases + 1))
        if ! "$bin" sweep --list "$f" >"$tmp/out" 2>"$tmp/err"; then
                fail "$f" "a shipped sweep spec is rejected"
                sed 's/^/    /' "$tmp/err" | head -20
        fi
done

# The command's own usage errors: exit 2 with a hint.
cli_case 2 "unknown option '--jbos'; did you mean '--jobs'?" sweep sweeps/gemm_sizes.yaml --jbos 2
cli_case 2 "--jobs 0: expected an integer in [1, 1024]" sweep sweeps/gemm_sizes.yaml --jobs 0
cli_case 2 "which spec?" sweep
cli_case 2 "unexpected argument 'b.yaml' (one spec at a time)" sweep a.yaml b.yaml
cli_case 0 "usage: cubesim sweep SPEC.yaml" sweep --help
cli_case 0 "panel gemm_sizes: kernel gemm, 8 points" sweep --list sweeps/gemm_sizes.yaml

echo "sweep_bad: $n_cases cases, $n_failed failures"
[ "$n_failed" -eq 0 ]
