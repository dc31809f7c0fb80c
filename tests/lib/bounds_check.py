#!/usr/bin/env python3
"""Check a `cubesim run --json --profile` summary against closed forms:
each bound is the run's work over the machine's aggregate rate (from
`cubesim topo show --format json` of the same machine), bound_by is the
largest, of_bound = bound / kernel time, and the per-line profile adds up
to the totals (issue time, op counts, GEMM and MATH engine time).

With the run's op_log, the PE_DMA bound (DMA bytes over the engines'
bandwidth) and the PE_MATH bound (elements x cycles per element over
lanes x clock) are checked from its records too.

usage: bounds_check.py SUMMARY.json TOPO.json OPLOG.jsonl [GEMM_FLOPS]"""
import json, math, sys

def main(argv):
    s = json.load(open(argv[1]))
    t = json.load(open(argv[2]))
    m, tot = t["machine"], t["totals"]
    bad = []
    def near(name, got, want):
        # bounds are ps rounded up, reported in ns
        if abs(got - want) > 0.0015 + 1e-9 * want:
            bad.append("%s: %.6f ns, expected %.6f" % (name, got, want))
    b = s["bounds"]
    if len(argv) > 4:
        if s["gemm_flops"] != int(argv[4]):
            bad.append("gemm_flops %d, expected %s" % (s["gemm_flops"], argv[4]))
    near("PE_GEMM", b["PE_GEMM"], s["gemm_flops"] / tot["peak_gemm_flops_per_s"] * 1e9)
    hbm = s["hbm_read_bytes"] + s["hbm_write_bytes"]
    near("HBM", b["HBM"], hbm / tot["hbm_bw_bytes_per_s"] * 1e9)
    noc_bw = sum(e["bw_bytes_per_s"] for e in t["edges"] if e["class"] == "noc")
    near("NoC", b["NoC"], s["link_bytes"]["noc"] / noc_bw * 1e9)
    pes = tot["pes"]
    cpe = m["pe"]["math"]["cycles_per_element"]
    alias = {"neg": "scale", "copy": "cast"}
    dma_bytes = math_cycles = flops = 0
    for line in open(argv[3]):
        r = json.loads(line)
        if r["component"] == "pe_dma":
            dma_bytes += r["bytes"]
        elif r["component"] == "pe_math":
            op = r["params"].get("stage_op", r["op"])
            op = alias.get(op, op)
            if op not in cpe:
                bad.append("op_log: MATH op %s has no cycles per element" % op)
                continue
            math_cycles += r["flops"] * cpe[op]
        elif r["component"] == "pe_gemm":
            flops += r["flops"]
    if flops != s["gemm_flops"]:
        bad.append("op_log: %d GEMM FLOPs, summary %d" % (flops, s["gemm_flops"]))
    near("PE_DMA", b["PE_DMA"], dma_bytes / (m["pe"]["dma"]["bw_bytes_per_s"] * pes) * 1e9)
    near("PE_MATH", b["PE_MATH"],
         math_cycles / (m["pe"]["math"]["lanes"] * m["pe"]["math"]["clock_hz"] * pes) * 1e9)
    by = max(b, key=lambda k: b[k])
    if s["bound_by"] != by:
        bad.append("bound_by %s, the largest is %s" % (s["bound_by"], by))
    kernel_ns = s["kernel_ps"] / 1000
    want = min(1.0, b[by] / kernel_ns)
    if not 0 <= s["of_bound"] <= 1 or abs(s["of_bound"] - want) > 1e-6:
        bad.append("of_bound %.6f, expected %.6f" % (s["of_bound"], want))
    for k in b:
        if b[k] > kernel_ns + 0.001:
            bad.append("bound %s %.3f ns exceeds the kernel time %.3f ns" % (k, b[k], kernel_ns))
    near_t = s["gemm_flops"] / (s["kernel_ps"] * 1e-12) * 1e-12
    if abs(s["tflops"] - near_t) > 1e-9 * max(1, near_t):
        bad.append("tflops %.6f, expected %.6f" % (s["tflops"], near_t))
    p = s.get("profile")
    if p is not None:
        issue = sum(l["issue_ps"] for l in p)
        if issue != sum(s["pe_cpu_issue_ps"].values()):
            bad.append("profile issue %d != pe_cpu_issue_ps %d" % (issue, sum(s["pe_cpu_issue_ps"].values())))
        ops = sum(l["ops"] for l in p)
        if ops != sum(s["op_counts"].values()):
            bad.append("profile ops %d != op_counts %d" % (ops, sum(s["op_counts"].values())))
        # A record spans its op from start to end (pipeline fill and
        # latency included), busy_ps counts the engine's occupancy: the
        # profile's engine time is at least the busy time.
        for eng in ("pe_gemm", "pe_math"):
            got = sum(l[eng + "_ps"] for l in p)
            if got < s["busy_ps"][eng]:
                bad.append("profile %s %d < busy_ps %d" % (eng, got, s["busy_ps"][eng]))
        totals = [l["issue_ps"] + l["pe_dma_ps"] + l["pe_gemm_ps"] + l["pe_math_ps"] + l["waited_ps"] for l in p]
        if totals != sorted(totals, reverse=True):
            bad.append("profile is not sorted by time")
    if bad:
        print("\n".join(bad))
        return 1
    print("bounds_check: %s: bound by %s at %.3f of its bound: ok" % (s["kernel"], s["bound_by"], s["of_bound"]))
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
