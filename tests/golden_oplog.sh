#!/usr/bin/env bash
# Golden runs: topology + kernel + parameters -> the op_log's SHA-256, run
# twice, identical, and equal to the digest checked in under tests/golden/.
# A change in timing or op order shows here; if it is intended, regenerate
# with CUBESIM_UPDATE_GOLDEN=1 and say why in the commit.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
golden="$src/tests/golden/oplog.sha256"
runs=(
        "gemm_epilogue small.yaml --set m=128 --set n=96 --set k=200 --set tile_k=64"
        "gemm small.yaml --set m=100 --set n=70 --set k=130"
        "softmax default.yaml --set rows=300 --set cols=100"
        "program_ids multi_sip.yaml"
        "gqa_prefill small.yaml --set q_heads=8 --set kv_heads=2 --set head_dim=32 --set seq_len=160 --set kv_tile=32"
        "gqa_decode small.yaml --set q_heads=8 --set kv_heads=2 --set head_dim=32 --set seq_len=500"
)
: >"$tmp/now"
for r in "${runs[@]}"; do
        read -r kernel topo args <<<"$r"
        # shellcheck disable=SC2086
        "$bin" run "$kernel" --topo "$src/topologies/$topo" $args --oplog "$tmp/a" >/dev/null
        # shellcheck disable=SC2086
        "$bin" run "$kernel" --topo "$src/topologies/$topo" $args --oplog "$tmp/b" >/dev/null
        cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: $r: two runs differ"; exit 1; }
        echo "$(sha256sum <"$tmp/a" | cut -d' ' -f1)  $r" >>"$tmp/now"
done
if [ "${CUBESIM_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/now" "$golden"
        echo "golden digests written to $golden"
        exit 0
fi
if ! diff -u "$golden" "$tmp/now"; then
        echo "FAIL: op_log digests changed (CUBESIM_UPDATE_GOLDEN=1 to accept)"
        exit 1
fi
echo "golden op_log: ${#runs[@]} runs identical twice and equal to the checked-in digests"
