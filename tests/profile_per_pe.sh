#!/usr/bin/env bash
# tests/profile_per_pe.sh: --profile's table says what its sums are over
# (PEs and DMA channels) and has a per-PE column: the PE_CPU's time at the
# line (issue + waited) over the run's PEs, whose sum over the lines is at
# most the kernel time.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
"$bin" run gemm --set m=512 --profile >"$tmp/p.txt" || { echo "FAIL: run exits $?"; exit 1; }
"$bin" run gemm --set m=512 --json >"$tmp/p.json" || { echo "FAIL: run --json exits $?"; exit 1; }
python3 - "$tmp/p.txt" "$tmp/p.json" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read(); run = json.load(open(sys.argv[2]))
n_pes = len(run["pes"]); ok = True
m = re.search(r"time per kernel source line \(us, summed over PEs and DMA channels; per PE: "
              r"issue \+ waited over (\d+) PEs\):\n\s+file:line\s+ops\s+issue\s+pe_dma\s+pe_gemm"
              r"\s+pe_math\s+waited\s+per PE\n((?:\s+\S+:\d+(?:\s+[\d.]+){7}\n)+)", text)
if not m:
    print("FAIL: no per-PE profile table:\n" + text); sys.exit(1)
if int(m.group(1)) != n_pes:
    print("FAIL: the table counts %s PEs, the run has %d" % (m.group(1), n_pes)); ok = False
total = 0
for row in m.group(2).splitlines():
    f = row.split(); issue, waited, per = float(f[2]), float(f[6]), float(f[7])
    if abs(per - (issue + waited) / n_pes) > 0.0015:
        print("FAIL: per PE %s is not (issue + waited) / PEs in: %s" % (per, row)); ok = False
    total += per
if total > run["kernel_ps"] / 1e6 * 1.001:
    print("FAIL: the per-PE times sum to %.3f us, past the kernel time" % total); ok = False
sys.exit(0 if ok else 1)
EOF
rc=$?
[ $rc -eq 0 ] && echo "profile_per_pe: ok"
exit $rc
