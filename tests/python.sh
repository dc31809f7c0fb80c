#!/usr/bin/env bash
# tests/python.sh: the Python package's tests (python/tests, pytest) against
# this build's libcubesim.so and cubesim. Needs a python3 with pytest and
# numpy (scripts/deps.sh installs Debian's); without them the test fails,
# never passes by skipping. Under the sanitizer build the library needs the
# sanitizer runtime first in the process: it is preloaded, leak checks off
# (the interpreter's own allocations are no leaks of ours).
set -euo pipefail
src=${CUBESIM_SOURCE_DIR:?}
build=${CUBESIM_BUILD_DIR:?}
lib=$build/libcubesim.so
py=""
for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c 'import pytest, numpy' 2>/dev/null; then
                py=$cand
                break
        fi
done
[ -n "$py" ] || { echo "no python3 with pytest and numpy (bash scripts/deps.sh)"; exit 1; }
pre=()
# grep reads all of ldd's output (no -q): under pipefail, a grep -q that
# stops at the first match can leave ldd killed by SIGPIPE, the pipeline
# then fails, and the sanitizer build's library loads without its runtime.
if ldd "$lib" | grep libasan >/dev/null; then
        asan=$(cc -print-file-name=libasan.so)
        ubsan=$(cc -print-file-name=libubsan.so)
        pre=(env "LD_PRELOAD=$asan $ubsan" "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
export CUBESIM_LIB=$lib PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
cd "$src"
# -p no:cacheprovider: nothing written into the source tree. Exit 5 (no
# tests collected) fails like any other non-zero status.
# --basetemp: a directory of this run's own (pytest's shared default under
# /tmp is pruned by any other pytest run of the same user meanwhile).
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
# Say what runs, so that a failure's log tells the interpreter apart from
# the tests; -u and faulthandler: nothing lost in a buffer if the process
# dies, and a crash prints the Python stack of every thread. --capture=sys:
# what the library writes to the file descriptors (a sanitizer's report, a
# message before an exit) reaches this log, not a capture file.
echo "python: $(command -v "$py") $("$py" -c 'import sys, numpy, pytest; print(sys.version.split()[0], "numpy", numpy.__version__, "pytest", pytest.__version__)')"
echo "library: $lib"
# A run that dies before pytest writes its report (no junit file), with
# nothing printed, has been seen a few times under a loaded sanitizer run
# and never reproduced alone; it is run once more and both statuses are
# printed, so that a real failure still fails and a flake stays visible.
run_pytest() {
        "${pre[@]}" "$py" -u -X faulthandler -m pytest -q -rfE --capture=sys -p no:cacheprovider \
                --basetemp "$base/t" --junitxml "$base/report.xml" python/tests
}
rc=0
run_pytest || rc=$?
if [ "$rc" -ne 0 ] && [ ! -s "$base/report.xml" ]; then
        echo "pytest exited with status $rc before writing its report; running it once more"
        rc=0
        run_pytest || rc=$?
fi
[ "$rc" -eq 0 ] || echo "pytest exited with status $rc"
exit "$rc"
