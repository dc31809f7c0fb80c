#!/usr/bin/env bash
# tests/host_limits.sh: engine-hold refuses more processes than this host
# holds, with the figure, before mapping any stack: here 10^7 processes
# (about 58 GiB resident) past the memory available, with the mapping
# limit raised by its test hook so that the memory check is the one that
# speaks. Skipped on a host with that much memory available. (The mapping
# check itself is tests/bad/cli/bench_run_host_mappings.case.)
set -uo pipefail
bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [ -z "$avail_kib" ] || [ "$avail_kib" -gt $((50 * 1024 * 1024)) ]; then
        echo "SKIP: ${avail_kib:-unknown} KiB available; the case needs a host with less than 50 GiB"
        exit 0
fi
err=$(CUBESIM_TEST_MAX_MAP_COUNT=100000000 timeout 60 "$bin" bench run engine-hold \
        --set procs=10000000 --set iters=1 2>&1 >/dev/null)
rc=$?
want="error: engine-hold: its 10000000 processes need about 58593 MiB of host memory (6 KiB each) and"
if [ "$rc" -ne 2 ] || ! grep -qF "$want" <<<"$err" || ! grep -qF "run fewer (procs=N)" <<<"$err"; then
        echo "FAIL: engine-hold procs=10^7: exit $rc (want 2); stderr:"
        echo "$err" | head -5
        exit 1
fi
echo "host limits: all cases pass"
