#!/usr/bin/env bash
# tests/topo_bad.sh: every bad topology in tests/bad/topo/ must be rejected by
# `cubesim topo check` with exit status 2 and the messages the file states.
#
# Convention (tests/bad/README.md): a case is NAME.yaml; its expectations are
# comment lines in it, or in NAME.expect when the YAML cannot carry them
# (an empty file; a missing file, where NAME.yaml does not exist):
#   # expect: TEXT         stderr contains TEXT (fixed string, any line)
#   # expect-count: N      stderr has exactly N lines containing ": error: "
#   # args: ARGS...        extra arguments before the file (e.g. --set k=v)
# Cases that cannot be committed (a file over the 16 MiB cap) are made here.
# Environment: CUBESIM_BIN (the binary), CUBESIM_SOURCE_DIR (the tree).
set -u

. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src" || exit 1
dir=tests/bad/topo

. "$src/tests/lib/bad_corpus.sh"

corpus_run() {
        timeout 120 "$bin" topo check "$@"
}

corpus_stdout_bad() {
        grep -q ': ok' "$1"
}

run_corpus "$dir"

# Generated: a file over the size cap (all comment, so only the cap can reject it).
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' '#' >"$tmp/huge_file.yaml"
printf '# expect: huge_file.yaml: error: the file is larger than 16 MiB\n# expect-count: 1\n' \
        >"$tmp/huge_file.expect"
run_case huge_file "$tmp/huge_file.yaml" "$tmp/huge_file.expect"

# The shipped topologies are good: the same command accepts them.
for f in topologies/*.yaml; do
        n_cases=$((n_cases + 1))
        if ! "$bin" topo check "$f" >"$tmp/out" 2>"$tmp/err"; then
                fail "$f" "a shipped topology is rejected"
                sed 's/^/    /' "$tmp/err" | head -20
        fi
done

# The command itself: usage errors exit 2 with a hint; show matches the snapshot.
cli_case 2 "unknown option '--fromat'; did you mean '--format'?" topo show --fromat json
cli_case 2 "--format must be text, json or dot (got 'yml')" topo show --format yml
cli_case 2 "unknown subcommand 'chek'; did you mean 'check'?" topo chek topologies/small.yaml
cli_case 2 "no FILE given" topo check
cli_case 0 "usage: cubesim topo check" topo --help
cli_case 0 "topologies/small.yaml: ok ('small': 8 PEs, 2 cubes, 1 SIP;" topo check topologies/small.yaml
cli_case 0 "# totals: 64 PEs, 4 cubes, 1 SIP" topo show
n_cases=$((n_cases + 1))
if ! "$bin" topo show --format json | cmp -s - tests/golden/topo_default.json; then
        fail "topo show --format json" "differs from tests/golden/topo_default.json"
fi
n_cases=$((n_cases + 1))
"$bin" topo show topologies/small.yaml --set pe.dma.bw_gbps=12.5 >"$tmp/resolved.yaml"
if ! "$bin" topo check "$tmp/resolved.yaml" >/dev/null ||
        ! grep -q '^    bw_gbps: 12.5$' "$tmp/resolved.yaml"; then
        fail "topo show (text)" "is not a loadable topology with the override"
fi

echo "topo_bad: $n_cases cases, $n_failed failures"
[ "$n_failed" -eq 0 ]
