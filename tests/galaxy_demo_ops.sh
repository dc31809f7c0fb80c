#!/usr/bin/env bash
# tests/galaxy_demo_ops.sh: the llama3_70b_galaxy demo's device programs
# (docs/adr/0049). kernels/ccl_async.c in data mode against NumPy
# (tests/lib/ccl_model.py): all_gather and reduce_scatter along dim 0 and
# dim 1, and all_reduce, on a Galaxy row of 8 chips and a column of 4,
# with 1, 3 and 4 links, pieces and messages uneven; bf16 small integers
# sum exactly. Its timing: more links carry an all-reduce faster, and it
# pays no per-call handshakes (a one-row collective costs less than
# kernels/ccl.c's with its entry and exit and mux handshakes). tt_llm_op's
# mm_ring in data mode (each ring core's columns are in0 . its weight
# rows, the in0 pieces in ring order), and prefetch no faster than the
# DRAM banks can give its bytes.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
. "$src/tests/lib/numpy.sh"
py=$(numpy_python)
cd "$src"
gx=topologies/tt_galaxy.yaml

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# n mesh_cols order rows cols links [machine file]
check_cca() {
        local n=$1 mc=$2 order=$3 rows=$4 cols=$5 links=$6 topo=${7:-$gx}
        rm -rf "$tmp/c"
        mkdir -p "$tmp/c"
        "$py" tests/lib/ccl_model.py write "$tmp/c" "$n" "$rows" "$cols" 7
        for op in all_gather:0 all_gather:1 reduce_scatter:0 reduce_scatter:1 all_reduce:0; do
                rm -rf "$tmp/c/out"
                "$bin" run ccl_async --topo $topo --set system.sips=$n \
                        --set system.inter_sip.mesh_cols=$mc --mode data --inputs "$tmp/c" \
                        --outputs "$tmp/c/out" --set op=${op%%:*} --set dim=${op##*:} \
                        --set rows=$rows --set cols=$cols --set links=$links --set dtype=bf16 \
                        --set chunk_bytes=$((3 * 2 * cols / 2)) >"$tmp/c/log" 2>&1 ||
                        fail "$op n=$n links=$links: $(head -3 "$tmp/c/log")"
                "$py" tests/lib/ccl_model.py check "$tmp/c" ${op%%:*} "$n" ${op##*:} "$order" ||
                        fail "$op n=$n links=$links"
        done
}
check_cca 8 8 0,1,2,3,4,5,6,7 10 12 4
check_cca 8 8 0,1,2,3,4,5,6,7 9 13 1
check_cca 4 1 0,1,2,3 10 12 3
check_cca 4 1 0,1,2,3 8 16 4
# other machines: the workers at their links' routers (tl_sip_link_pe), those
# without a link (more workers than links, a line's ends) on free PEs
check_cca 4 4 0,1,2,3 10 12 2 topologies/tt_t3k.yaml
check_cca 2 2 0,1 9 13 3 topologies/tt_wormhole_n300.yaml

ps() {  # kernel_ps of a run
        "$bin" run "$@" --json |
                "$py" -c 'import json, sys; print(json.load(sys.stdin)["kernel_ps"])'
}
row="--topo $gx --set system.sips=8 --set system.inter_sip.mesh_cols=8"
# WO's all-reduce along a mesh row: [32, 2048] bfp8 a chip
ar1=$(ps ccl_async $row --set op=all_reduce --set cols=2048 --set links=1)
ar4=$(ps ccl_async $row --set op=all_reduce --set cols=2048 --set links=4)
[ $((ar4 * 2)) -lt "$ar1" ] || fail "all_reduce: 4 links ($ar4 ps) not under half of 1 ($ar1 ps)"
# one row of 32 bf16 a chip: the async form has no entry/exit or mux handshakes
small=$(ps ccl_async $row --set op=all_gather --set rows=1 --set cols=32 --set dtype=bf16 \
        --set links=1)
generic=$(ps all_gather $row --set bytes=64 --set cols=32 --set algo=line --set workers=1)
[ "$small" -lt "$generic" ] || fail "ccl_async all_gather ($small ps) not under ccl's ($generic ps)"

# mm_ring: out[c] = in0 (its pieces in ring order) . w[c]
one="--topo $gx --set system.sips=1"
mkdir -p "$tmp/mm/in" "$tmp/mm/out"
"$bin" run tt_llm_op $one --mode data --save-inputs "$tmp/mm/in" --outputs "$tmp/mm/out" \
        --set op=mm_ring --set m=1 --set k=768 --set n=1536 --set wdtype=bfp8_b \
        >/dev/null 2>"$tmp/mm/err" || { cat "$tmp/mm/err"; exit 1; }
"$py" - "$tmp/mm" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
a = np.load(f"{d}/in/a.npy").astype(np.float64)
w = np.load(f"{d}/in/w.npy").astype(np.float64)
out = np.load(f"{d}/out/out.npy").astype(np.float64)
ring = a.shape[0]
assert ring == 24 and out.shape == (24, 32, 64), (a.shape, out.shape)
x = np.concatenate([a[i] for i in range(ring)], axis=1)
for c in range(ring):
    ref = x @ w[c]
    assert np.abs(out[c] - ref).max() <= 0.01 * np.abs(ref).max() + 1e-3, c
PY
# prefetch: W2's [3584, 2048] bfp8 (padded to 3840 x 2304) from 12 banks
# at 24 GB/s x 92% at best
pf=$(ps tt_llm_op $one --set op=prefetch --set k=3584 --set n=2048 --set wdtype=bfp8_b)
"$py" - "$pf" <<'PY'
import sys
ps = int(sys.argv[1])
floor = 3840 * 2304 // 1024 * 1088 / (12 * 24e9 * 0.92) * 1e12
assert floor <= ps <= 3 * floor, (ps, floor)
PY
echo ok
