# tests/lib/script.sh: the start the script tests share. Sourced first,
#     . "${CUBESIM_SOURCE_DIR:?set by ctest}/tests/lib/script.sh"
# it sets bin (CUBESIM_BIN, the cubesim binary under test) and src
# (CUBESIM_SOURCE_DIR, the source tree), both required (ctest sets them),
# and tmp, a scratch directory removed when the script exits; check
# DESCRIPTION COMMAND... runs a check, saying FAIL and setting fail=1 if
# it fails.
bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
src=${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
        local what=$1
        shift
        if ! "$@"; then
                echo "FAIL: $what"
                fail=1
        fi
}
# gemm_spec FILE NAME PARAMS GRID: a sweep spec of one gemm panel in FILE,
# PARAMS and GRID its YAML flow maps ("{n: 64, k: 64}", "{m: [64, 128]}").
gemm_spec() {
        printf 'version: 1\nname: %s\nkernel: gemm\nparams: %s\ngrid: %s\n' "$2" "$3" "$4" >"$1"
}
# fails2 WANT COMMAND...: the command must exit 2, print nothing on stdout
# and say WANT (a fixed string) on stderr; else the script ends.
fails2() {
        local want=$1 rc
        shift
        set +e
        "$@" >"$tmp/fails2.out" 2>"$tmp/fails2.err"
        rc=$?
        set -e
        [ "$rc" = 2 ] || { echo "exit $rc for: $*"; cat "$tmp/fails2.err"; exit 1; }
        [ ! -s "$tmp/fails2.out" ] || { echo "printed on stdout for: $*"; exit 1; }
        grep -qF -- "$want" "$tmp/fails2.err" || { echo "want: $want"; cat "$tmp/fails2.err"; exit 1; }
}
