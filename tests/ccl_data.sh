#!/usr/bin/env bash
# tests/ccl_data.sh: the collectives (kernels/ccl.c over kernels/collective.c)
# in data mode against NumPy (tests/lib/ccl_model.py): all_gather,
# reduce_scatter and all_reduce, ring and line, uni- and bidirectional,
# along dim 0 and dim 1, on 2 chips (tt_wormhole_n300.yaml), 3 (a T3000 cut
# to one short row: pieces uneven in both dims, chunks that do not divide
# them) and 8 (the T3000's 2 x 4 mesh in ring order), fp32 and bf16; a ring
# reduce-scatter (and all-reduce) one-shot (these inputs are below
# oneshot_bytes) as tt-metal's direct op (direct=1, the default: one worker a
# link, and with 2), as the one-shot path (direct=0), and along the ring
# (oneshot_bytes=0); a line's gathers, and a ring's (these inputs are below
# 64 pages a device), both multicast through router PEs (mcast=1, the
# default) and passed on by the workers (mcast=0), with 1 worker a flow and
# with 2 (a line's), and 8 (the reduce-scatter rule's most, on the n300). Small
# integers sum exactly in both, so every result must match exactly. Also
# checks that the machine files the collectives run on have the documented
# link counts, and that the links' per-message cost is paid per message.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
. "$src/tests/lib/numpy.sh"
py=$(numpy_python)
cd "$src"

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# topo devices order rows cols dtype [--set ...]
check_all() {
        local topo=$1 n=$2 order=$3 rows=$4 cols=$5 dt=$6 size=4
        shift 6
        [ "$dt" = bf16 ] && size=2
        rm -rf "$tmp/c"
        mkdir -p "$tmp/c"
        "$py" tests/lib/ccl_model.py write "$tmp/c" "$n" "$rows" "$cols" 5
        for op in all_gather reduce_scatter all_reduce; do
                for form in ring:524288:1:0:1 ring:524288:1:2:1 ring:524288:1:0:0 \
                        ring:524288:0:0:1 ring:0:1:0:1 line:524288:1:0:1 line:524288:1:2:1 \
                        line:524288:0:0:1; do
                        local algo oneshot mcast workers direct
                        IFS=: read -r algo oneshot mcast workers direct <<<"$form"
                        for bidir in 0 1; do
                                for dim in 0 1; do
                                        rm -rf "$tmp/c/out"
                                        "$bin" run $op --topo "$topo" "$@" --mode data \
                                                --inputs "$tmp/c" --outputs "$tmp/c/out" \
                                                --set bytes=$((rows * cols * size)) \
                                                --set cols=$cols --set dtype=$dt \
                                                --set chunk_bytes=$((3 * size * cols / 2)) \
                                                --set algo=$algo --set bidir=$bidir \
                                                --set oneshot_bytes=$oneshot \
                                                --set mcast=$mcast --set workers=$workers \
                                                --set direct=$direct \
                                                --set dim=$dim >"$tmp/c/log" 2>&1 \
                                                || fail "$op $form bidir=$bidir dim=$dim on $topo: $(head -3 "$tmp/c/log")"
                                        "$py" tests/lib/ccl_model.py check "$tmp/c" $op "$n" $dim "$order" \
                                                || fail "$op $form bidir=$bidir dim=$dim $dt on $topo $*"
                                done
                        done
                done
        done
}

check_all topologies/tt_wormhole_n300.yaml 2 0,1 5 6 fp32
check_all topologies/tt_t3k.yaml 3 0,1,2 7 13 fp32 --set system.sips=3
check_all topologies/tt_t3k.yaml 8 0,1,2,3,7,6,5,4 10 12 bf16

# The direct ring reduce-scatter (direct=1, the default up to oneshot_bytes;
# ADR 0054) and the all-reduce's reduce-scatter half on the T3000's 8 chips,
# fp32 and bf16, along both dims, 10 x 12 inputs (pieces of 1 or 2 rows and
# of 1 or 2 columns), messages of 1.5 rows (one row: a piece along dim 1 is
# ten messages): small integers exactly; normal values within 1e-5 (fp32) or
# 2^-7 (bf16: the inputs' and the result's rounding) of the magnitudes each
# element sums.
for data in int float; do
        rm -rf "$tmp/d"
        mkdir -p "$tmp/d"
        "$py" tests/lib/ccl_model.py write "$tmp/d" 8 10 12 7 $data
        for dt in fp32:4:0.00001 bf16:2:0.0078125; do
                IFS=: read -r dtype size tol <<<"$dt"
                [ $data = int ] && tol=
                for op in reduce_scatter all_reduce; do
                        for dim in 0 1; do
                                rm -rf "$tmp/d/out"
                                "$bin" run $op --topo topologies/tt_t3k.yaml --mode data \
                                        --inputs "$tmp/d" --outputs "$tmp/d/out" \
                                        --set bytes=$((10 * 12 * size)) --set cols=12 \
                                        --set dtype=$dtype --set chunk_bytes=$((18 * size)) \
                                        --set algo=ring --set direct=1 --set dim=$dim \
                                        >"$tmp/d/log" 2>&1 \
                                        || fail "direct $op $dtype dim=$dim: $(head -3 "$tmp/d/log")"
                                "$py" tests/lib/ccl_model.py check "$tmp/d" $op 8 $dim \
                                        0,1,2,3,7,6,5,4 $tol \
                                        || fail "direct $op $dtype dim=$dim, $data data"
                        done
                done
        done
done

# 8 workers a flow (the reduce-scatter rule's most, ADR 0056) on the n300's
# line, both directions, both dims: exact.
rm -rf "$tmp/w"
mkdir -p "$tmp/w"
"$py" tests/lib/ccl_model.py write "$tmp/w" 2 20 12 5
for op in reduce_scatter all_reduce; do
        for dim in 0 1; do
                rm -rf "$tmp/w/out"
                "$bin" run $op --topo topologies/tt_wormhole_n300.yaml --mode data \
                        --inputs "$tmp/w" --outputs "$tmp/w/out" --set bytes=$((20 * 12 * 4)) \
                        --set cols=12 --set dtype=fp32 --set chunk_bytes=48 --set algo=line \
                        --set workers=8 --set dim=$dim >"$tmp/w/log" 2>&1 \
                        || fail "8 workers $op dim=$dim: $(head -3 "$tmp/w/log")"
                "$py" tests/lib/ccl_model.py check "$tmp/w" $op 2 $dim 0,1 \
                        || fail "8 workers $op dim=$dim"
        done
done
# tt-metal's reduce-scatter rule (ADR 0056) picks a reduce-scatter's and an
# all-reduce's workers by the bytes a link carries (half the input on the
# n300's line): 2 below 500 000 B, 4 up to 4 000 000 B, 8 above; each chip
# runs 2 flows of them and a mux a flow (an all-reduce also its gather's
# router stage a flow; of its 80 PEs the rest are idle). With
# rs_rule=0 they take the all-gather's rule (4 above 256 KiB).
busy_pes() {
        "$bin" run "$1" --topo topologies/tt_wormhole_n300.yaml --set algo=line --set bytes="$2" \
                "${@:3}" --json | "$py" -c 'import json, sys; d = json.load(sys.stdin); print(len(d["pes"]) - d["idle_pes"])'
}
for c in reduce_scatter:999424:12 reduce_scatter:1001472:20 reduce_scatter:7999488:20 \
        reduce_scatter:8001536:36 all_reduce:8001536:40; do
        IFS=: read -r op bytes want <<<"$c"
        got=$(busy_pes $op $bytes)
        [ "$got" = "$want" ] || fail "$op at $bytes B: $got busy PEs, expected $want"
done
got=$(busy_pes reduce_scatter 8001536 --set rs_rule=0)
[ "$got" = 20 ] || fail "rs_rule=0 at 8001536 B: $got busy PEs, expected 20 (4 workers)"

# The link counts: n300 and T3000 one link a pair for user kernels, Galaxy four.
for f in tt_wormhole_n300:1 tt_t3k:1 tt_galaxy:4; do
        "$bin" topo show "topologies/${f%%:*}.yaml" --format json >"$tmp/t.json"
        grep -q "\"links\": ${f##*:}," "$tmp/t.json" || fail "${f%%:*}: expected ${f##*:} links"
done
# The links' per-message cost (docs/adr/0054): 4 MiB a device in 64 KiB
# messages, streamed (no multicast, 2 workers: several messages in flight),
# 64 a link. On a ring fabric (message_overlap 0) the Ethernet core's
# handling holds the wire: message_ns 600 adds at least 64 x 600 ns. On a
# line fabric (1) the core handles a message while the wire carries the one
# before: it adds less than 4 x 600 ns. The fabric's framing (6144 B
# packets, a 48 B header, 50 B a frame of at most 1500 B) costs its bytes:
# 6442 / 6144 of the wire time.
ag_ps() {
        "$bin" run all_gather --topo topologies/tt_wormhole_n300.yaml --set bytes=4194304 \
                --set workers=2 --set chunk_bytes=65536 --set algo=line --set bidir=0 --set mcast=0 \
                "$@" --json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["kernel_ps"])'
}
for ov in 0 1; do
        t0=$(ag_ps --set system.inter_sip.message_overlap=$ov --set system.inter_sip.message_ns=0)
        t1=$(ag_ps --set system.inter_sip.message_overlap=$ov --set system.inter_sip.message_ns=600)
        if [ $ov = 0 ]; then
                [ $((t1 - t0)) -ge $((64 * 600000)) ] ||
                        fail "message_overlap 0: message_ns 600 adds $((t1 - t0)) ps (< 64 x 600 ns)"
        else
                [ $((t1 - t0)) -lt $((4 * 600000)) ] ||
                        fail "message_overlap 1: message_ns 600 adds $((t1 - t0)) ps (>= 4 x 600 ns)"
        fi
done
t2=$(ag_ps --set system.inter_sip.message_ns=0 --set system.inter_sip.packet_bytes=0)
"$py" -c "import sys; r = $t0 / $t2; sys.exit(0 if 1.045 < r < 1.05 else 1)" ||
        fail "framing: $t0 / $t2 ps, not 6442 / 6144 of the wire time"

# kernel_ps of OP on the T3000's ring at BYTES a device, then --set pairs.
ring_ps() {
        local op=$1 bytes=$2
        shift 2
        "$bin" run "$op" --topo topologies/tt_t3k.yaml --set bytes="$bytes" --set algo=ring "$@" \
                --json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["kernel_ps"])'
}
# Workers by default (workers=0) follow tt-metal's all-gather rule on the
# bytes a link carries, 7/8 of T halved on a ring: 1 up to 4 KiB, 2 up to
# 256 KiB, else 4 (the unicast gather's: mcast=0 below 64 pages a device).
for w in 1024:1 65536:2 131072:4; do
        [ "$(ring_ps all_gather "${w%%:*}" --set mcast=0)" = \
          "$(ring_ps all_gather "${w%%:*}" --set mcast=0 --set workers="${w##*:}")" ] \
                || fail "all_gather ring 8 at ${w%%:*} bytes a device: not ${w##*:} workers by default"
done
# A ring's gather multicasts below 64 pages (2 KiB bf16 tiles) a device,
# and not from 64 pages on (tt-metal's select_program_factory).
[ "$(ring_ps all_gather 126976)" != "$(ring_ps all_gather 126976 --set mcast=0)" ] \
        || fail "all_gather ring 8 at 62 pages a device: no multicast by default"
[ "$(ring_ps all_gather 131072)" = "$(ring_ps all_gather 131072 --set mcast=0)" ] \
        || fail "all_gather ring 8 at 64 pages a device: a multicast by default"
# The one-shot ring reduce-scatter moves about 2.3 x the bytes: forced at
# 4 MiB a device, where the links bound the time, it is slower than the
# ring algorithm; it is the default up to 512 KiB a device only.
[ "$(ring_ps reduce_scatter 4194304 --set oneshot_bytes=4194304)" -gt \
  "$(ring_ps reduce_scatter 4194304)" ] || fail "reduce_scatter ring 8 at 4 MiB: one-shot not slower"
rs512=$(ring_ps reduce_scatter 524288)
[ "$rs512" = "$(ring_ps reduce_scatter 524288 --set oneshot_bytes=524288)" ] &&
        [ "$rs512" != "$(ring_ps reduce_scatter 524288 --set oneshot_bytes=0)" ] \
        || fail "reduce_scatter ring 8 at 512 KiB: not one-shot by default"
[ "$(ring_ps reduce_scatter 1048576)" = "$(ring_ps reduce_scatter 1048576 --set oneshot_bytes=0)" ] \
        || fail "reduce_scatter ring 8 at 1 MiB: one-shot by default"
# A reduce-scatter syncs with its neighbour (4 packets a sync on a ring):
# the syncs cost time.
[ "$(ring_ps reduce_scatter 4194304)" -gt "$(ring_ps reduce_scatter 4194304 --set sync_packets=-1)" ] \
        || fail "reduce_scatter ring 8 at 4 MiB: the syncs cost nothing"
# The workers open and close their fabric connections through a mux PE a
# direction (its ready, their connect and teardown): a fixed cost a call,
# paid twice by an all-reduce (a reduce-scatter, then an all-gather), and
# nothing without the muxes. (At 64 KiB a device a ring's all-gather
# multicasts, its workers connecting to the first router stage instead,
# ADR 0055; the all-reduce's reduce-scatter half as the one-shot path:
# direct=0.)
for op in all_gather all_reduce; do
        [ "$(ring_ps $op 65536 --set direct=0)" -gt "$(ring_ps $op 65536 --set mux=0 --set direct=0)" ] \
                || fail "$op ring 8 at 64 KiB: the mux handshakes cost nothing"
done
ag_mux=$(( $(ring_ps all_gather 65536) - $(ring_ps all_gather 65536 --set mux=0) ))
ar_mux=$(( $(ring_ps all_reduce 65536 --set direct=0) - $(ring_ps all_reduce 65536 --set mux=0 --set direct=0) ))
[ "$ar_mux" -gt "$ag_mux" ] || fail "all_reduce's mux handshakes ($ar_mux ps) not above all_gather's ($ag_mux ps)"
# The direct reduce-scatter is the default where the one-shot path applies
# (at most oneshot_bytes a device, on a ring), and opens and closes its own
# connections (mux=0: none).
[ "$(ring_ps reduce_scatter 16384)" = "$(ring_ps reduce_scatter 16384 --set direct=1)" ] &&
        [ "$(ring_ps reduce_scatter 16384)" != "$(ring_ps reduce_scatter 16384 --set direct=0)" ] \
        || fail "reduce_scatter ring 8 at 16 KiB: not the direct op by default"
[ "$(ring_ps reduce_scatter 1048576)" = "$(ring_ps reduce_scatter 1048576 --set direct=0)" ] \
        || fail "reduce_scatter ring 8 at 1 MiB: direct=1 moved a reduce-scatter along the ring"
[ "$(ring_ps reduce_scatter 16384)" -gt "$(ring_ps reduce_scatter 16384 --set mux=0)" ] \
        || fail "reduce_scatter ring 8 at 16 KiB: the direct op's connections cost nothing"
# Its fixed cost a call (direct_fixed_ns, ADR 0057) is each worker's core
# busy before the op starts (its reader, on a core of its own, reads
# meanwhile): every member pays it, so the op takes exactly that much
# longer, a reduce-scatter and an all-reduce's half alike; the path along
# the ring (1 MiB) does not pay it.
for op in reduce_scatter all_reduce; do
        d=$(( $(ring_ps $op 16384 --set direct_fixed_ns=3000) - $(ring_ps $op 16384 --set direct_fixed_ns=0) ))
        [ "$d" = 3000000 ] || fail "$op ring 8 at 16 KiB: direct_fixed_ns=3000 added $d ps, not 3000000"
done
[ "$(ring_ps reduce_scatter 1048576 --set direct_fixed_ns=3000)" = "$(ring_ps reduce_scatter 1048576 --set direct_fixed_ns=0)" ] \
        || fail "reduce_scatter ring 8 at 1 MiB: the direct op's fixed cost paid by the ring path"
# A line's all-gather multicasts (mcast=1, the default; ADR 0048): on the
# n300 at 16 MiB a device its one worker a direction, one message in
# flight, keeps the link below 60% of its 12.5 GB/s, where the workers
# passing chunks on (mcast=0) keep it above 80%.
line_pct() {
        "$bin" run all_gather --topo topologies/tt_wormhole_n300.yaml --set bytes=16777216 \
                --set algo=line --set chunk_bytes=65536 --set pipeline=2 "$@" --json |
                "$py" -c 'import json, sys; print(int(16777216 / (json.load(sys.stdin)["kernel_ps"] * 1e-12) / 12.5e9 * 100))'
}
[ "$(line_pct)" -lt 60 ] || fail "all_gather line 2 at 16 MiB: $(line_pct)% of line rate with mcast"
[ "$(line_pct --set mcast=0)" -gt 80 ] || fail "all_gather line 2 at 16 MiB: $(line_pct --set mcast=0)% with mcast=0"
# Its workers are one a link: with 2 links a pair, the default is 2.
n300_ps() {
        "$bin" run all_gather --topo topologies/tt_wormhole_n300.yaml --set system.inter_sip.links=2 \
                --set bytes=1048576 --set algo=line "$@" --json |
                "$py" -c 'import json, sys; print(json.load(sys.stdin)["kernel_ps"])'
}
[ "$(n300_ps)" = "$(n300_ps --set workers=2)" ] && [ "$(n300_ps)" != "$(n300_ps --set workers=1)" ] \
        || fail "all_gather line 2 with 2 links: not 2 workers by default"
# The host's launch skew (system.launch_skew_ns, ADR 0055): on the T3000
# SIP s's PEs start s / 7 of it after SIP 0's, and a collective whose
# start barrier waits for the last chip takes most of the skew longer.
"$bin" run all_gather --topo topologies/tt_t3k.yaml --set bytes=8192 --set algo=ring \
        --set system.launch_skew_ns=7000 --json >"$tmp/skew.json"
"$py" - "$tmp/skew.json" <<'PY' || fail "launch skew: the SIPs do not start s / 7 x 7 us apart"
import json, sys
d = json.load(open(sys.argv[1]))
t0 = d["target_start_ps"]
for p in d["pes"]:
    sip = int(p["pe"].split(".")[0][3:])
    assert p["exec_start_ps"] == t0 + sip * 1000000, (p["pe"], p["exec_start_ps"] - t0)
PY
plain=$(ring_ps all_gather 8192)
skewed=$(ring_ps all_gather 8192 --set system.launch_skew_ns=2000)
[ $((skewed - plain)) -gt 1000000 ] && [ $((skewed - plain)) -le 2000000 ] \
        || fail "all_gather ring 8 at 8 KiB: a 2 us launch skew adds $(((skewed - plain) / 1000)) ns"
echo "ok"
