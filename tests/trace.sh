#!/usr/bin/env bash
# Traces Perfetto draws right (tests/lib/trace_check.py): slices on a track
# nest, flows pair inside slices, counters move forward in time; for a
# decode and a prefill run, with --trace-pes and --trace-window filters,
# and gzip output that decompresses to the same bytes.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
check="python3 $src/tests/lib/trace_check.py"

"$bin" run gqa_decode --trace "$tmp/d.json" >/dev/null
$check "$tmp/d.json" --expect blocked,dep,ipcq,counter,hbm,link,dma_lanes
"$bin" run gqa_prefill --set seq_len=512 --trace "$tmp/p.json" >/dev/null
$check "$tmp/p.json" --expect blocked,dep,counter,hbm,link

# Filters: only PEs 0-3 and 17 (and their cubes' memory and links); only
# slices that meet [2000, 4000] ns.
"$bin" run gqa_decode --trace "$tmp/f.json" --trace-pes 0-3,17 --trace-window 2000:4000 >/dev/null
$check "$tmp/f.json" --pes 0-3,17 --window 2000:4000 --expect blocked,counter
[ "$(stat -c %s "$tmp/f.json")" -lt "$(stat -c %s "$tmp/d.json")" ]

# gzip: the same bytes, compressed, streamed.
"$bin" run gqa_decode --trace "$tmp/d.json.gz" >/dev/null
gzip -t "$tmp/d.json.gz"
cmp <(gzip -dc "$tmp/d.json.gz") "$tmp/d.json"
[ "$(stat -c %s "$tmp/d.json.gz")" -lt "$(stat -c %s "$tmp/d.json")" ]
$check "$tmp/d.json.gz"

# Bad filters: exit 2 with the option named.
expect_bad() {
        local want=$1; shift
        set +e
        msg=$("$bin" run gqa_decode "$@" 2>&1); rc=$?
        set -e
        [ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc for $*: $msg"; exit 1; }
        grep -qF -- "$want" <<<"$msg" || { echo "for $*: expected '$want' in: $msg"; exit 1; }
}
expect_bad "--trace-pes 0,x: expected global PE indices" --trace "$tmp/x.json" --trace-pes 0,x
expect_bad "PE 64 is not on this machine (PEs 0..63)" --trace "$tmp/x.json" --trace-pes 60-64
expect_bad "--trace-window 5:2: expected T0:T1" --trace "$tmp/x.json" --trace-window 5:2
expect_bad "add --trace FILE" --trace-pes 0
echo "trace: decode and prefill traces nest, pair and count forward; filters and gzip work"
