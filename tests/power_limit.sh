#!/usr/bin/env bash
# tests/power_limit.sh: power limits (issue 27). A machine may declare
# system.tdp_w and sip.tdp_w (per chip). A run whose average power exceeds
# system.tdp_w says so in its summary and has over_tdp true in --json; one
# under it has over_tdp false and no warning; without a limit neither key
# is written. Per chip: max_sip_power_w is the highest SIP's average power
# (the SIPs' shares of the energy, so at least the machine's over the SIPs
# and at most the machine's), flagged by over_sip_tdp. A negative limit
# is refused.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
j() { "$bin" run gemm --set m=512 --json "$@"; }
j >"$tmp/none.json" && j --set system.tdp_w=1 >"$tmp/over.json" &&
        j --set system.tdp_w=100000 >"$tmp/under.json" &&
        j --topo "$src/topologies/multi_sip.yaml" --set sip.tdp_w=1 >"$tmp/sips.json" ||
        { echo "FAIL: a run failed"; exit 1; }
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
t = sys.argv[1]
def load(n): return json.load(open("%s/%s.json" % (t, n)))
none, over, under, sips = load("none"), load("over"), load("under"), load("sips")
ok = True
def want(c, what):
    global ok
    if not c: print("FAIL:", what); ok = False
want("tdp_w" not in none and "over_tdp" not in none and "sip_tdp_w" not in none,
     "keys written without a limit")
want(over["tdp_w"] == 1 and over["over_tdp"] is True, "over the limit: %s" % over.get("over_tdp"))
want(under["over_tdp"] is False, "under the limit flagged")
want(over["avg_power_w"] == none["avg_power_w"], "the limit changed the power")
n = 4   # topologies/multi_sip.yaml
want(sips["avg_power_w"] / n * (1 - 1e-9) <= sips["max_sip_power_w"] <= sips["avg_power_w"] * (1 + 1e-9),
     "max_sip_power_w %s outside [avg/SIPs, avg] of %s" % (sips["max_sip_power_w"], sips["avg_power_w"]))
want(sips["over_sip_tdp"] is True and sips["sip_tdp_w"] == 1, "per-chip limit not flagged")
sys.exit(0 if ok else 1)
EOF
"$bin" run gemm --set m=512 --set system.tdp_w=1 >"$tmp/over.txt"
grep -q "^  warning: average power .* W exceeds the machine's power limit system.tdp_w = 1 W (by " "$tmp/over.txt" ||
        { echo "FAIL: no warning in the summary"; fail=1; }
"$bin" run gemm --set m=512 --set system.tdp_w=100000 | grep "power limit" >/dev/null &&
        { echo "FAIL: a warning under the limit"; fail=1; }
"$bin" run gemm --set system.tdp_w=-5 >/dev/null 2>"$tmp/neg.txt"
[ $? -eq 2 ] && grep -q "system.tdp_w" "$tmp/neg.txt" || { echo "FAIL: a negative limit"; cat "$tmp/neg.txt"; fail=1; }
[ $fail -eq 0 ] && echo "power_limit: ok"
exit $fail
