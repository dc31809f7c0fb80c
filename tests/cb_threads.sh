#!/usr/bin/env bash
# tests/cb_threads.sh: kernel threads and circular buffers (docs/adr/0025)
# with tests/cb/cb_pipe.c, y = 2 x + 1 through a reader thread, the
# kernel's compute and a writer thread:
# - data mode: the threads give the values of the kernel alone (and
#   2 x + 1, checked with NumPy), on the default and a Tenstorrent machine;
# - back-pressure: with one page per buffer the reader's copy of block i+1
#   starts no earlier than the compute's copy of block i has ended (the
#   compute pops block i only after it); with two pages it starts earlier;
# - overlap: the threads finish sooner than the kernel alone.
# Misuse and deadlocks are tests/bad/kernels/cb_*.c and set_noc_bad.c.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
. "$src/tests/lib/numpy.sh"
py=$(numpy_python)
cd "$src"
cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I "$src/include" tests/cb/cb_pipe.c \
        -o "$tmp/libcb.so"
run() { "$bin" run cb_pipe --kernels "$tmp/libcb.so" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Data mode.
for topo in small tt_wormhole_n150; do
        for cfg in "threads=0 pages=1" "threads=1 pages=1" "threads=1 pages=2"; do
                set -- $cfg
                out="$tmp/out_${topo}_$1_$2"
                run --topo topologies/$topo.yaml --set rows=512 --set cols=64 --set "$1" \
                        --set "$2" --mode data --seed 3 --save-inputs "$tmp/in_$topo" \
                        --outputs "$out" >/dev/null
        done
        cmp "$tmp/out_${topo}_threads=0_pages=1/y.npy" "$tmp/out_${topo}_threads=1_pages=1/y.npy" \
                || fail "$topo: threads change y (pages 1)"
        cmp "$tmp/out_${topo}_threads=0_pages=1/y.npy" "$tmp/out_${topo}_threads=1_pages=2/y.npy" \
                || fail "$topo: threads change y (pages 2)"
        "$py" - "$tmp/in_$topo/x.npy" "$tmp/out_${topo}_threads=1_pages=2/y.npy" <<'PY' \
                || fail "$topo: y is not 2 x + 1"
import sys, numpy as np
x, y = np.load(sys.argv[1]), np.load(sys.argv[2])
sys.exit(0 if np.allclose(y, 2 * x + 1, rtol=1e-6, atol=1e-6) else 1)
PY
done

# Back-pressure: PE 0's copies, in order, by the line that issued them.
reader_line=$(grep -n 'tl_copy_to(tl, page' tests/cb/cb_pipe.c | cut -d: -f1)
compute_line=$(grep -n 'tl_copy_to(tl, out' tests/cb/cb_pipe.c | cut -d: -f1)
order() {        # pages: prints "ok" when every reader copy i+1 starts after compute copy i ends
        run --topo topologies/small.yaml --set rows=2048 --set cols=64 --set pages=$1 \
                --oplog "$tmp/o$1.jsonl" >/dev/null
        "$py" - "$tmp/o$1.jsonl" "$reader_line" "$compute_line" <<'PY'
import json, sys
rd, cp = [], []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["pe"] != "sip0.cube0.pe0" or r["op"] != "copy_to":
        continue
    line = r["params"].get("line")
    if line == int(sys.argv[2]):
        rd.append(r)
    elif line == int(sys.argv[3]):
        cp.append(r)
assert len(rd) == len(cp) > 2, (len(rd), len(cp))
after = all(rd[i + 1]["start_ps"] >= cp[i]["end_ps"] for i in range(len(cp) - 1))
print("after" if after else "overlaps")
PY
}
[ "$(order 1)" = after ] || fail "pages 1: the reader refilled the page before the compute popped it"
[ "$(order 2)" = overlaps ] || fail "pages 2: the reader never ran ahead of the compute"

# Overlap: the threads beat the kernel alone.
ns() { run --topo topologies/small.yaml --set rows=32768 --set cols=512 --set "$1" --json \
        | "$py" -c 'import json,sys; print(json.load(sys.stdin)["sim_ns"])'; }
t0=$(ns threads=0) t1=$(ns threads=1)
"$py" -c "import sys; sys.exit(0 if $t1 < 0.95 * $t0 else 1)" \
        || fail "threads ($t1 ns) not faster than the kernel alone ($t0 ns)"
echo "ok: cb_threads ($t0 ns alone, $t1 ns in threads)"
