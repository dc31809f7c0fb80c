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
