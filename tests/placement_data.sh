#!/usr/bin/env bash
# tests/placement_data.sh: data mode follows placement (docs/adr/0017).
# tests/bad/kernels/stale_replica.c (one cube writes a replicated
# temporary, PEs of another cube read it) is a kernel error there; built
# as its passing variants it must match out = 3 everywhere with --expect:
# the temporary interleaved (one copy every PE reads), and each cube
# writing its own copy with different values (cube 1 reads its own 3, not
# cube 0's later 5, as on the machine). The fault itself must not pass
# --expect either: it exits 1, naming both lines; so does its variant
# whose first read is a composite updating the rows in place.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
case_c=tests/bad/kernels/stale_replica.c
run=(--topo topologies/small.yaml --mode data)

# expect/out.npy: float32 [8, 64], all 3 (a version 1.0 .npy, header padded
# to 64 bytes).
mkdir -p "$tmp/expect"
python3 - "$tmp/expect/out.npy" <<'PY'
import struct, sys
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 64), }"
hdr += " " * (64 - 10 - len(hdr) - 1) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(struct.pack("<512f", *([3.0] * 512)))
PY

fail=0
for variant in "" STALE_REPLICA_RMW STALE_REPLICA_INTERLEAVED STALE_REPLICA_OWN_COPY; do
        lib=$tmp/lib${variant:-fault}.so
        cc -std=c11 -O1 -Wall -Wextra -Wno-unused-parameter -Werror -shared -fPIC \
                ${variant:+-D$variant} -I include "$case_c" -o "$lib"
        set +e
        out=$("$bin" run stale_replica --kernels "$lib" "${run[@]}" --expect "$tmp/expect" 2>&1)
        rc=$?
        set -e
        if [ -z "$variant" ]; then
                want_rc=1
                want="stale_replica.c:73: error: PE sip0.cube1.pe0: tl_load: reads element [0, 0] of tmp"
                want2="wrote it to cube 0's copy at $case_c:64"
        elif [ "$variant" = STALE_REPLICA_RMW ]; then
                want_rc=1
                want="stale_replica.c:77: error: PE sip0.cube1.pe0: tl_composite: reads element [0, 0] of tmp"
                want2="wrote it to cube 0's copy at $case_c:64"
        else
                want_rc=0 want="output out [8, 64] matches" want2=$want
        fi
        if [ "$rc" -ne "$want_rc" ] || ! grep -qF "$want" <<<"$out" || ! grep -qF "$want2" <<<"$out"
        then
                echo "FAIL ${variant:-the fault}: exit $rc (expected $want_rc), wanted '$want'" \
                        "and '$want2' in:"
                sed 's/^/    /' <<<"$out" | head -12
                fail=1
        fi
done
[ "$fail" -eq 0 ] && echo "placement_data: the stale replica fails naming both lines;" \
        "interleaved and per-cube copies match --expect"
exit "$fail"
