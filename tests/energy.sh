#!/usr/bin/env bash
# A run's energy (docs/adr/0024) against a hand computation from the
# machine's parameters: a GEMM's MACs x pJ/MAC, bytes x pJ/byte, byte-hops
# x pJ/byte-hop, ops x pJ/op, and static power over the kernel time and
# the busy time; energy_by_class_j sums to energy_j; doubling one
# parameter doubles its class's dynamic part and leaves the others alone;
# the same run gives the same energy; a machine without energy keys costs 0.
# Power over windows of the kernel time: the windows' energies sum to
# energy_j; peak_power_w >= avg_power_w; a machine whose only cost is a
# constant power (idle = active) has its peak equal to its average; a
# machine paying only for MACs peaks above its average and no higher than
# every PE's GEMM array busy for the whole window; the text summary states
# the peak and its window; the trace's "power mW" counter of each cube
# integrates to energy_j.
# Energy per MAC by operand dtype: on a machine paying only for MACs, an
# fp32 GEMM costs the derived ratio (2.3) x a bf16 GEMM of the same
# shape, bfp8_b 0.55 and bfp4_b 0.475; setting pj_per_mac_fp32 prices fp32
# at that figure and leaves bf16 alone; gemm_macs_by_dtype counts the MACs
# in the operands' class; topo show states the derived figures, and its
# YAML (~ for a derived one) loads back to the same machine.
# Over every energy key of a machine (a run booking every class, and a
# Tenstorrent program): doubling one never lowers the total and moves only
# its class; nothing is negative; classes sum to the total; runs repeat.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"

gemm=(gemm --set m=256 --set n=512 --set k=384)
"$bin" run "${gemm[@]}" --json >"$tmp/base.json"
"$bin" run "${gemm[@]}" --json >"$tmp/again.json"
"$bin" topo show --format json >"$tmp/topo.json"
"$bin" run "${gemm[@]}" --set pe.gemm.energy.pj_per_mac=0.44 --json >"$tmp/mac2.json"
"$bin" run "${gemm[@]}" --set cube.hbm.energy.pj_per_byte=96 --json >"$tmp/hbm2.json"
"$bin" run "${gemm[@]}" --set pe.gemm.fidelity_passes=2 --json >"$tmp/hifi2.json"
# A machine stating no energy keys: every class 0.
cat >"$tmp/free.yaml" <<'YAML'
version: 1
pe:
  cpu: {energy: {pj_per_op: 0, idle_w: 0, active_w: 0}}
  dma: {energy: {idle_w: 0, active_w: 0}}
  gemm: {energy: {pj_per_mac: 0, idle_w: 0, active_w: 0}}
  math: {energy: {pj_per_element_cycle: 0, idle_w: 0, active_w: 0}}
  tcm: {energy: {pj_per_byte: 0, idle_w: 0, active_w: 0}}
cube:
  hbm: {energy: {pj_per_byte: 0, idle_w: 0}}
  noc: {energy: {pj_per_byte_hop: 0, idle_w: 0}}
YAML
"$bin" run "${gemm[@]}" --topo "$tmp/free.yaml" --json >"$tmp/free.json"

# A machine costing nothing but pe.gemm's $1.
machine() {
        cat <<YAML
version: 1
pe:
  gemm: {energy: {$1}}
  cpu: {energy: {pj_per_op: 0, idle_w: 0, active_w: 0}}
  dma: {energy: {idle_w: 0, active_w: 0}}
  math: {energy: {pj_per_element_cycle: 0, idle_w: 0, active_w: 0}}
  tcm: {energy: {pj_per_byte: 0, idle_w: 0, active_w: 0}}
cube:
  hbm: {energy: {pj_per_byte: 0, idle_w: 0}}
  noc: {energy: {pj_per_byte_hop: 0, idle_w: 0}}
sip: {inter_cube: {energy: {pj_per_byte: 0}}}
YAML
}
machine "pj_per_mac: 0, idle_w: 0.5, active_w: 0.5" >"$tmp/flat.yaml"
machine "pj_per_mac: 0.22, idle_w: 0, active_w: 0" >"$tmp/mac.yaml"
"$bin" run gqa_prefill --json >"$tmp/gqa.json"
"$bin" run "${gemm[@]}" --trace "$tmp/trace.json" --json >"$tmp/traced.json"
"$bin" run "${gemm[@]}" --topo "$tmp/flat.yaml" --json >"$tmp/flat.json"
"$bin" run "${gemm[@]}" --topo "$tmp/mac.yaml" --json >"$tmp/mac.json"

python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
r, t = load("base"), load("topo")["machine"]
m, n, k = 256, 512, 384
span = r["kernel_ps"]
pes = len(r["pes"])
cubes = t["sip"]["cubes"]
fails = []

def close(what, got, want, rel=1e-9):
    if abs(got - want) > rel * max(abs(want), 1e-30):
        fails.append(f"{what}: got {got!r}, hand computation {want!r}")

def static_at(e, units, busy, span):
    """J: idle W over the idle part of units x span, active W over busy."""
    busy = min(busy, units * span)
    return (e.get("idle_mw", 0) * (units * span - busy) + e.get("active_mw", 0) * busy) * 1e-15

static = lambda e, units, busy: static_at(e, units, busy, span)

fj = lambda e, key: e[key] * 1e-15          # fJ -> J per unit
pe, cube = t["pe"], t["cube"]
cls = r["energy_by_class_j"]
ops = sum(r["op_counts"].values())
want = {
    # MACs of C = A.B: m n k, one pass on the default machine
    "pe_gemm": m * n * k * fj(pe["gemm"]["energy"], "fj_per_mac")
               + static(pe["gemm"]["energy"], pes, r["busy_ps"]["pe_gemm"]),
    "pe_cpu": ops * fj(pe["cpu"]["energy"], "fj_per_op")
              + static(pe["cpu"]["energy"], pes, r["busy_ps"]["pe_cpu"]),
    "pe_dma": static(pe["dma"]["energy"], pes, r["busy_ps"]["pe_dma"]),
    "hbm": (r["hbm_read_bytes"] + r["hbm_write_bytes"]) * fj(cube["hbm"]["energy"], "fj_per_byte")
           + static(cube["hbm"]["energy"], cubes, 0),
    "noc": r["link_bytes"]["noc"] * fj(cube["noc"]["energy"], "fj_per_byte_hop")
           + static(cube["noc"]["energy"], cubes, 0),
    "inter_cube": r["link_bytes"]["inter_cube"] * 1e-15
                  * t["sip"]["inter_cube"]["energy"]["fj_per_byte"],
}
for c, w in want.items():
    close(f"energy_by_class_j.{c}", cls[c], w)
if not all(v >= 0 for v in cls.values()):
    fails.append(f"a class is negative: {cls}")
close("sum of energy_by_class_j", sum(cls.values()), r["energy_j"])
close("avg_power_w", r["avg_power_w"], r["energy_j"] / (span * 1e-12))
if not 0 < r["static_j"] < r["energy_j"]:
    fails.append(f"static_j {r['static_j']} not within (0, energy_j {r['energy_j']})")
if r["energy_j"] != load("again")["energy_j"]:
    fails.append("the same run gave a different energy")

def doubled(name, c, dyn):
    x = load(name)
    for o in cls:
        if o != c and x["energy_by_class_j"][o] != cls[o]:
            fails.append(f"{name}: class {o} moved ({cls[o]} -> {x['energy_by_class_j'][o]})")
    close(f"{name}: {c} grows by its dynamic part", x["energy_by_class_j"][c] - cls[c], dyn, 1e-6)
    if x["energy_j"] < r["energy_j"]:
        fails.append(f"{name}: doubling a parameter lowered the total")
    if x["kernel_ps"] != span:
        fails.append(f"{name}: an energy parameter changed the timing")

doubled("mac2", "pe_gemm", m * n * k * fj(pe["gemm"]["energy"], "fj_per_mac"))
doubled("hbm2", "hbm", (r["hbm_read_bytes"] + r["hbm_write_bytes"])
        * fj(cube["hbm"]["energy"], "fj_per_byte"))
# Two fidelity passes: the array runs twice, so twice the MACs' energy.
h = load("hifi2")
close("hifi2 pe_gemm dynamic",
      h["energy_by_class_j"]["pe_gemm"] - static_at(pe["gemm"]["energy"], pes,
                                                    h["busy_ps"]["pe_gemm"], h["kernel_ps"]),
      2 * m * n * k * fj(pe["gemm"]["energy"], "fj_per_mac"))
f = load("free")
if f["energy_j"] != 0 or any(f["energy_by_class_j"].values()) or f["avg_power_w"] != 0:
    fails.append(f"a machine with every energy key 0 used energy: {f['energy_by_class_j']}")
# The existing keys are the same with or without the energy keys.
for key in ("kernel_ps", "busy_ps", "link_bytes", "hbm_read_bytes", "bounds", "op_counts"):
    if f[key] != r[key]:
        fails.append(f"{key} differs with the energy keys 0")

# Power over windows.
for name in ("base", "gqa", "flat", "mac"):
    r = load(name)
    win = r["power_windows_j"]
    span, w_ns = r["kernel_ps"], r["peak_power_window_ns"]
    close(f"{name}: sum of power_windows_j", sum(win), r["energy_j"])
    if not r["peak_power_w"] >= r["avg_power_w"] * (1 - 1e-9):
        fails.append(f"{name}: peak {r['peak_power_w']} below average {r['avg_power_w']}")
    close(f"{name}: peak_power_w", r["peak_power_w"], max(win) / (w_ns * 1e-9))
    if not (len(win) - 1) * w_ns * 1e3 < span <= len(win) * w_ns * 1e3:
        fails.append(f"{name}: {len(win)} windows of {w_ns} ns do not cover {span} ps")
    if not 1 <= len(win) <= 256:
        fails.append(f"{name}: {len(win)} windows")
    if min(win) < 0:
        fails.append(f"{name}: a window has negative energy")
f = load("flat")
close("constant power: peak_power_w = avg_power_w", f["peak_power_w"], f["avg_power_w"])
close("constant power: avg_power_w = 0.5 W x PEs", f["avg_power_w"], 0.5 * len(f["pes"]))
m = load("mac")
# Energy per busy ps of one array x every PE: the most a window can hold.
cap = m["energy_j"] / (m["busy_ps"]["pe_gemm"] * 1e-12) * len(m["pes"])
if not m["avg_power_w"] < m["peak_power_w"] <= cap * (1 + 1e-9):
    fails.append(f"MAC-only: peak {m['peak_power_w']} not in (avg {m['avg_power_w']}, {cap}]")
# The trace's power counters: one per cube, their steps' energy summing to
# energy_j within their whole-mW rounding.
tr = json.load(open(f"{d}/trace.json"))
tr = tr["traceEvents"] if isinstance(tr, dict) else tr
steps = {}
for e in tr:
    if e.get("ph") == "C" and e.get("name") == "power mW":
        steps.setdefault(e["pid"], []).append((e["ts"], e["args"]["power mW"]))
t = load("traced")
if len(steps) != cubes:
    fails.append(f"power counters on {len(steps)} tracks, want one per cube ({cubes})")
got = sum(v * 1e-3 * (t1 - t0) * 1e-6 for s in steps.values()
          for (t0, v), (t1, _) in zip(sorted(s), sorted(s)[1:]))
close("trace power counters' energy", got, t["energy_j"], 1e-3)
for x in fails:
    print("FAIL", x)
sys.exit(1 if fails else 0)
PY
# The text summary prints them.
"$bin" run "${gemm[@]}" >"$tmp/text.txt"
grep -Eq '^  energy: [0-9.e-]+ J \([0-9.e-]+ J static\), average power [0-9.]+ W' "$tmp/text.txt" ||
        { echo "FAIL the text summary has no energy line"; cat "$tmp/text.txt"; exit 1; }
grep -Eq '^    pe_gemm +[0-9.e-]+ J +[0-9.]+%$' "$tmp/text.txt" ||
        { echo "FAIL the text summary has no energy per class"; exit 1; }
grep -Eq '^  peak power: [0-9.e+-]+ W over a [0-9.e+-]+ ns window \([0-9]+ windows\)$' "$tmp/text.txt" ||
        { echo "FAIL the text summary has no peak power line"; cat "$tmp/text.txt"; exit 1; }
# Energy per MAC by operand dtype.
for dt in bf16 fp32 bfp8_b bfp4_b; do
        "$bin" run "${gemm[@]}" --set dtype=$dt --topo "$tmp/mac.yaml" --json >"$tmp/dt_$dt.json"
done
"$bin" run "${gemm[@]}" --set dtype=fp32 --topo "$tmp/mac.yaml" \
        --set pe.gemm.energy.pj_per_mac_fp32=1.5 --json >"$tmp/dt_fp32_set.json"
"$bin" run "${gemm[@]}" --set dtype=bf16 --topo "$tmp/mac.yaml" \
        --set pe.gemm.energy.pj_per_mac_fp32=1.5 --json >"$tmp/dt_bf16_set.json"
"$bin" topo show "$tmp/mac.yaml" --format json >"$tmp/mac_topo.json"
"$bin" topo show "$tmp/mac.yaml" --set pe.gemm.energy.pj_per_mac_bfp8=0.3 >"$tmp/mac_shown.yaml"
"$bin" topo show "$tmp/mac_shown.yaml" --format json >"$tmp/mac_again.json"
"$bin" topo show "$tmp/mac.yaml" --set pe.gemm.energy.pj_per_mac_bfp8=0.3 --format json \
        >"$tmp/mac_set.json"
python3 - "$tmp" <<'PY2'
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
macs = 256 * 512 * 384
fails = []
gemm_j = lambda r: r["energy_by_class_j"]["pe_gemm"]
def close(what, got, want, rel=1e-9):
    if abs(got - want) > rel * max(abs(want), 1e-30):
        fails.append(f"{what}: got {got!r}, want {want!r}")
bf = load("dt_bf16")
close("bf16 GEMM energy", gemm_j(bf), macs * 0.22e-12)
for dt, ratio in (("fp32", 2.3), ("bfp8_b", 0.55), ("bfp4_b", 0.475)):
    r = load(f"dt_{dt}")
    close(f"{dt} / bf16 GEMM energy", gemm_j(r) / gemm_j(bf), ratio, 1e-2)
    want = {k: (macs if k == dt else 0) for k in ("bf16", "fp32", "bfp8_b", "bfp4_b")}
    if r["gemm_macs_by_dtype"] != want:
        fails.append(f"{dt}: gemm_macs_by_dtype {r['gemm_macs_by_dtype']}, want {want}")
    close(f"{dt}: classes sum to energy_j", sum(r["energy_by_class_j"].values()), r["energy_j"])
if gemm_j(load("dt_fp32")) <= gemm_j(bf):
    fails.append("an fp32 GEMM costs no more than a bf16 one")
close("pj_per_mac_fp32=1.5 prices fp32", gemm_j(load("dt_fp32_set")), macs * 1.5e-12)
if gemm_j(load("dt_bf16_set")) != gemm_j(bf):
    fails.append("pj_per_mac_fp32 moved a bf16 GEMM's energy")
e = load("mac_topo")["machine"]["pe"]["gemm"]["energy"]
want = {"fj_per_mac": 220, "fj_per_mac_fp32": 506, "fj_per_mac_bfp8": 121, "fj_per_mac_bfp4": 105}
if {k: e[k] for k in want} != want:
    fails.append(f"topo show's MAC energies {e}, want {want}")
if load("mac_again")["machine"] != load("mac_set")["machine"]:
    fails.append("topo show's YAML does not load back to the same machine")
if load("mac_set")["machine"]["pe"]["gemm"]["energy"]["fj_per_mac_bfp8"] != 300:
    fails.append("--set pe.gemm.energy.pj_per_mac_bfp8=0.3 is not 300 fJ")
for x in fails:
    print("FAIL", x)
sys.exit(1 if fails else 0)
PY2
grep -q "pj_per_mac_fp32: ~" "$tmp/mac_shown.yaml" ||
        { echo "FAIL topo show does not state a derived MAC energy as ~"; exit 1; }
# Properties over every energy key (issue 27): on a run that books every
# class (a tensor-parallel llm_layer over 2 SIPs: all-reduce over the
# inter-SIP links, cubes, GEMM, MATH, TCM, HBM), doubling any one key never
# lowers the total, moves only its own class (up, when the class does work
# that key prices) and leaves the timing alone; no class is negative, the
# classes sum to energy_j, the same run gives the same energy; the same
# holds of a Tenstorrent decode program (tt_llm_op's DRAM-sharded matmul on
# the n150).
prop=(llm_layer --topo "$src/topologies/multi_sip.yaml" --set system.sips=2 --set tp=2
      --set past_len=64)
"$bin" run "${prop[@]}" --json >"$tmp/p_base.json"
"$bin" run "${prop[@]}" --json >"$tmp/p_again.json"
"$bin" topo show "$src/topologies/multi_sip.yaml" --format json >"$tmp/p_topo.json"
tt=(tt_llm_op --topo "$src/topologies/tt_wormhole_n150.yaml" --set op=mm_dram --set k=2048
    --set n=2048 --set wdtype=bfp8_b)
"$bin" run "${tt[@]}" --json >"$tmp/p_tt.json"
"$bin" run "${tt[@]}" --json >"$tmp/p_tt_again.json"
python3 - "$tmp/p_topo.json" >"$tmp/p_keys" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["machine"]
def walk(o, path):
    for k, v in o.items():
        if k == "energy" and isinstance(v, dict):
            for key, val in v.items():
                unit = key.replace("fj_", "pj_").replace("_mw", "_w")
                print(f"{path}.energy.{unit} {val / 1000 * 2:g}")
        elif isinstance(v, dict):
            walk(v, f"{path}.{k}" if path else k)
walk(t, "")
PY
while read -r key val; do
        "$bin" run "${prop[@]}" --set "$key=$val" --json >"$tmp/p_$key.json"
done <"$tmp/p_keys"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
cls_of = {"pe.cpu": "pe_cpu", "pe.dma": "pe_dma", "pe.gemm": "pe_gemm", "pe.math": "pe_math",
          "pe.tcm": "tcm", "cube.noc": "noc", "cube.hbm": "hbm", "sip.inter_cube": "inter_cube",
          "system.inter_sip": "inter_sip"}
dt_of = {"pj_per_mac": "bf16", "pj_per_mac_fp32": "fp32", "pj_per_mac_bfp8": "bfp8_b",
         "pj_per_mac_bfp4": "bfp4_b"}
fails = []
def sound(name, r):
    c = r["energy_by_class_j"]
    if min(c.values()) < 0 or r["energy_j"] < 0 or r["static_j"] < 0:
        fails.append(f"{name}: negative energy {c}")
    if abs(sum(c.values()) - r["energy_j"]) > 1e-9 * r["energy_j"]:
        fails.append(f"{name}: classes sum to {sum(c.values())}, energy_j {r['energy_j']}")
base = load("p_base")
for name, again in (("p_base", "p_again"), ("p_tt", "p_tt_again")):
    sound(name, load(name))
    if load(name)["energy_by_class_j"] != load(again)["energy_by_class_j"]:
        fails.append(f"{name}: the same run gave another energy")
if min(base["energy_by_class_j"].values()) <= 0:
    fails.append(f"the run does not book every class: {base['energy_by_class_j']}")
keys = [l.split()[0] for l in open(f"{d}/p_keys")]
if len(keys) < 20:
    fails.append(f"only {len(keys)} energy keys: {keys}")
for key in keys:
    r = load(f"p_{key}")
    sound(key, r)
    comp, _, unit = key.rpartition(".energy.")
    c = cls_of[comp]
    if r["energy_j"] < base["energy_j"]:
        fails.append(f"{key} doubled lowered energy_j {base['energy_j']} -> {r['energy_j']}")
    if r["kernel_ps"] != base["kernel_ps"]:
        fails.append(f"{key} doubled changed kernel_ps")
    for o, v in base["energy_by_class_j"].items():
        if o != c and r["energy_by_class_j"][o] != v:
            fails.append(f"{key} doubled moved class {o}")
    works = unit not in dt_of or base["gemm_macs_by_dtype"][dt_of[unit]] > 0
    grew = r["energy_by_class_j"][c] > base["energy_by_class_j"][c]
    if works and not grew:
        fails.append(f"{key} doubled did not raise class {c}")
    if not works and grew:
        fails.append(f"{key} doubled raised class {c} with no work of its kind")
for x in fails:
    print("FAIL", x)
sys.exit(1 if fails else 0)
PY
echo "energy: ok"
