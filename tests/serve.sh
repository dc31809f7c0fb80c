#!/usr/bin/env bash
# cubesim serve (docs/serving.md) against its goals:
# - at very low load (--qps 0.05, 20 requests) the mean TTFT is the model
#   step's prefill (32 x llm_layer q_len=512 + llm_lm_head) and the mean
#   TPOT the batch-1 decode step, each within 5%;
# - Little's law: mean_in_system = throughput_rps x mean E2EL within 5%,
#   at low load and loaded, for each policy and with two replicas;
# - at saturation the output rate approaches the max-batch decode rate;
# - the same seed gives byte-identical JSON but for wall_s, another seed
#   does not; a trace in CSV and in JSONL gives the same run;
# - a KV cache too small for the batch preempts (counted) and still ends;
# - the grid of simulated shapes stays within 3% of exact simulation;
# - --out writes the CSVs, figures' scripts and a Perfetto trace with a
#   slice per iteration and a flow per request; the requests' energy_j
#   sums to the run's, and j_per_request is the completed ones' mean;
# - --find-capacity finds a rate that meets both SLOs at p99;
# - a bad trace is refused with FILE:LINE:COL messages and exit 2.
# Under the sanitizers (a binary 9x slower) the runs are smaller and the
# saturation and capacity searches are left to the plain build.
set -euo pipefail
bin=${CUBESIM_BIN:?}
light=0
if ldd "$bin" 2>/dev/null | grep libasan >/dev/null; then light=1; fi
big() { [ $light -eq 0 ]; }
# Two halves, so that CTest runs them side by side: base (this file) and
# load (tests/serve_load.sh sets SERVE_PART=load).
part=${SERVE_PART:-base}
in_part() { [ "$part" = "$1" ]; }
little="abs(j['mean_in_system'] / (j['throughput_rps'] * j['e2el_ms']['mean'] / 1e3) - 1) <= 0.05"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
serve() { "$bin" serve --model llama3-8b "$@"; }
step_ps() { "$bin" run "$@" --json | sed -n 's/^ *"kernel_ps": \([0-9]*\),$/\1/p'; }
check() { # NAME PYTHON-EXPRESSION-ON-j (the summary) [FILE]
        python3 - "$1" "$2" "${3:-$out/j}" <<'PY' || fail=1
import json, sys
name, expr, path = sys.argv[1:4]
j = json.load(open(path))
ok = eval(expr)
print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + json.dumps(j)[:600]))
sys.exit(0 if ok else 1)
PY
}

# -- low load: the model step ------------------------------------------------------------
if in_part base; then
n_low=20; big || n_low=4
serve --qps 0.05 --requests $n_low --prompt-len 512 --output-len 128 --json >"$out/j"
pre=$(step_ps llm_layer --set model=llama3-8b --set q_len=512)
dec=$(step_ps llm_layer --set model=llama3-8b --set past_len=576)
head1=$(step_ps llm_lm_head --set model=llama3-8b)
ttft=$(python3 -c "print((32 * $pre + $head1) / 1e9)")
tpot=$(python3 -c "print((32 * $dec + $head1) / 1e9)")
check "low load: mean TTFT within 5% of the prefill step ($ttft ms)" \
        "abs(j['ttft_ms']['mean'] / $ttft - 1) <= 0.05"
check "low load: mean TPOT within 5% of the batch-1 decode step ($tpot ms)" \
        "abs(j['tpot_ms']['mean'] / $tpot - 1) <= 0.05"
check "low load: every request completes" "j['completed'] == j['requests'] == $n_low"
check "low load: Little's law" "$little"
fi

# -- loaded: Little's law per policy, two replicas ----------------------------------------
if in_part base; then
n_load=40 mb=8 ol=uniform:8:40
variants=("--policy vllm" "--policy sarathi --chunk-tokens 136" "--policy static"
          "--dp 2 --router least-loaded" "--dp 2 --router round-robin --policy sarathi")
if ! big; then
        n_load=8 mb=4 ol=uniform:2:6
        variants=("--policy vllm" "--policy sarathi --chunk-tokens 132"
                  "--policy static --dp 2 --router least-loaded")
fi
for args in "${variants[@]}"; do
        # shellcheck disable=SC2086
        serve --qps 8 --requests $n_load --prompt-len 128 --output-len $ol \
                --max-batch $mb $args --json >"$out/j"
        check "loaded ($args): Little's law, all complete" \
                "$little and j['completed'] == $n_load and j['iterations'] > 0"
done
fi

# -- saturation: the max-batch decode rate -------------------------------------------------
if in_part load; then
if big; then
        serve --qps 1000 --requests 128 --prompt-len 32 --output-len 256 --max-batch 64 \
                --json >"$out/j"
        d64=$(step_ps llm_layer --set model=llama3-8b --set batch=64 --set past_len=160)
        h64=$(step_ps llm_lm_head --set model=llama3-8b --set batch=64)
        rate=$(python3 -c "print(64e12 / (32 * $d64 + $h64))")
        check "saturation: output rate >= 85% of the max-batch decode rate ($rate tok/s)" \
                "j['throughput_tok_s'] >= 0.85 * $rate and j['throughput_tok_s'] <= 1.02 * $rate"
fi
fi

# -- determinism ------------------------------------------------------------------------------
if in_part base; then
det="--qps 6 --requests 30 --prompt-len lognormal:100:0.3 --output-len uniform:8:32 --seed 7"
big || det="--qps 6 --requests 5 --prompt-len lognormal:64:0.1 --output-len uniform:2:5 --seed 7"
# shellcheck disable=SC2086
serve $det --json | sed 's/"wall_s": [0-9.]*//' >"$out/a"
# shellcheck disable=SC2086
serve $det --json | sed 's/"wall_s": [0-9.]*//' >"$out/b"
# shellcheck disable=SC2086
serve ${det/--seed 7/--seed 8} --json | sed 's/"wall_s": [0-9.]*//' >"$out/c"
if cmp -s "$out/a" "$out/b" && ! cmp -s "$out/a" "$out/c"; then
        echo "ok   the same seed gives the same JSON, another seed another"
else
        echo "FAIL determinism"; diff "$out/a" "$out/b" || true; fail=1
fi
fi

# -- traces: CSV and JSONL give the same run --------------------------------------------------
if in_part base; then
printf 'arrival_s,prompt_tokens,output_tokens\n0,100,20\n0.05,300,10\n0.5,64,40\n' >"$out/t.csv"
printf '{"arrival_s": 0, "prompt_tokens": 100, "output_tokens": 20}\n' >"$out/t.jsonl"
printf '{"arrival_s": 0.05, "prompt_tokens": 300, "output_tokens": 10}\n' >>"$out/t.jsonl"
printf '{"arrival_s": 0.5, "prompt_tokens": 64, "output_tokens": 40}\n' >>"$out/t.jsonl"
serve --trace "$out/t.csv" --json | sed 's/"wall_s": [0-9.]*//' >"$out/a"
serve --trace "$out/t.jsonl" --json | sed 's/"wall_s": [0-9.]*//' >"$out/b"
if cmp -s "$out/a" "$out/b" && grep -q '"requests": 3, "completed": 3' "$out/a"; then
        echo "ok   a CSV trace and a JSONL trace give the same run"
else
        echo "FAIL traces"; cat "$out/a" "$out/b"; fail=1
fi
fi

# -- preemption: a KV cache smaller than the batch ---------------------------------------------
if in_part load; then
# 4 GiB a cube leave 8 blocks of 1024 tokens: 8 prompts of 1000 fit, and
# each needs a second block 24 tokens into its output.
serve --qps 1000 --requests 8 --prompt-len 1000 --output-len 40 --max-batch 8 \
        --max-batch-tokens 2000 --kv-block 1024 --set cube.hbm.size_gib=4 --json >"$out/j"
check "a small KV cache preempts and every request still completes" \
        "j['preemptions'] > 0 and j['completed'] == 8 and j['kv_peak_frac'] == 1 and $little"
fi

# -- the grid against exact simulation --------------------------------------------------------
if in_part load; then
n_grid=30 n_check=12
big && serve --qps 30 --requests $n_grid --prompt-len 300 --output-len uniform:16:40 \
        --policy sarathi --chunk-tokens 128 --max-batch 8 --check-steps $n_check >"$out/t"
big && if python3 - "$out/t" "$n_check" <<'PY'; then echo "ok   the grid is within 3% of exact simulation"; else fail=1; fi
import re, sys
m = re.search(r"step check: (\d+) off-grid iterations, .*: max ([0-9.]+)%", open(sys.argv[1]).read())
ok = m and int(m.group(1)) >= int(sys.argv[2]) and float(m.group(2)) <= 3.0
print(open(sys.argv[1]).read() if not ok else "", end="")
sys.exit(0 if ok else 1)
PY
fi

# -- --out ------------------------------------------------------------------------------------
if in_part load; then
serve --qps 20 --requests 30 --prompt-len 128 --output-len 4 --max-batch 4 --dp 2 \
        --out "$out/o" --no-figures --json >"$out/j"
for f in requests.csv iterations.csv summary.json trace.json figures/latency_cdf.dat \
         figures/latency_cdf.gp figures/timeline.gp; do
        [ -s "$out/o/$f" ] || { echo "FAIL --out: no $f"; fail=1; }
done
check "--out: summary.json is the --json summary" "j == json.load(open('$out/o/summary.json'))"
check "--out: requests.csv has a row per request" \
        "len(open('$out/o/requests.csv').read().splitlines()) == 31"
check "--out: the trace has a slice per iteration, a flow per request, a track per replica" \
        "sum(e['ph'] == 'X' for e in j['traceEvents']) == $(($(wc -l <"$out/o/iterations.csv") - 1)) and sum(e['ph'] == 's' for e in j['traceEvents']) == 30 and {e['pid'] for e in j['traceEvents'] if e['ph'] == 'X'} == {0, 1}" \
        "$out/o/trace.json"
# Per-request energy: each iteration's energy shared by the tokens it
# computes for each request, so the requests' energy_j column sums to the
# run's energy_j, every share is positive, and j_per_request is their mean.
python3 - "$out/o/requests.csv" "$out/j" <<'PY' || fail=1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
e = [float(r["energy_j"]) for r in rows]
done = [float(r["energy_j"]) for r in rows if r["status"] == "ok"]
ok = (all(x > 0 for x in e) and abs(sum(e) - j["energy_j"]) <= 1e-6 * j["energy_j"]
      and len(done) == j["completed"] > 0
      and abs(j["j_per_request"] - sum(done) / len(done)) <= 1e-6 * j["j_per_request"])
print(("ok   " if ok else "FAIL ") + "--out: requests.csv's energy_j sums to the run's, "
      "j_per_request is its mean" + ("" if ok else f": {e} {j['energy_j']} {j['j_per_request']}"))
sys.exit(0 if ok else 1)
PY
fi

# -- capacity ---------------------------------------------------------------------------------
if in_part load; then
if big; then
        serve --find-capacity --requests 40 --output-len 32 --slo-ttft-ms 400 \
                --slo-tpot-ms 30 --json >"$out/j"
        check "--find-capacity: a rate that meets both SLOs at p99" \
                "j['capacity_qps'] > 0 and j['ttft_ms']['p99'] <= 400 and j['tpot_ms']['p99'] <= 30"
fi
fi

# -- bad traces: located messages, exit 2 -----------------------------------------------------
if in_part base; then
bad() { # FILE-CONTENT EXPECTED-MESSAGE
        printf "$1" >"$out/bad.csv"
        set +e
        serve --trace "$out/bad.csv" >"$out/stdout" 2>"$out/stderr"
        local rc=$?
        set -e
        if [ $rc -eq 2 ] && grep -qF -- "$out/bad.csv:$2" "$out/stderr"; then
                echo "ok   bad trace: $2"
        else
                echo "FAIL bad trace (exit $rc), want $out/bad.csv:$2"; cat "$out/stderr"; fail=1
        fi
}
bad 'arrival_s,prompt_tokens,output_tokens\n0,10,x\n' \
        "2:6: error: output_tokens: expected an integer in [1, 16777216]"
bad '0,10,5\n1,20\n' \
        "2:5: error: expected 3 fields (arrival_s,prompt_tokens,output_tokens), got 2"
bad '0,10,5\n-1,20,3\n' "2:1: error: arrival_s: expected a number of seconds in [0, 1e9]"
bad '2,10,5\n1,20,3\n' \
        "2:1: error: arrival_s 1 is before the previous request's 2 (a trace is in arrival order)"
bad 'arrival,prompt,output\n0,1,1\n' \
        "1:1: error: expected the header arrival_s,prompt_tokens,output_tokens or a first request"
bad '0,10,5,7\n' \
        "1:7: error: expected 3 fields (arrival_s,prompt_tokens,output_tokens), got more"
bad '{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 5}\n{"arrival_s": 1, "prompt_tokens": 2.5, "output_tokens": 5}\n' \
        "2:1: error: prompt_tokens: expected an integer in [1, 16777216]"
bad '{"arrival_s": 0, "prompt_tokens": 10}\n' '1:1: error: missing "output_tokens"'
bad '{"arrival_s": 0, "prompt_tokens": 10,, "output_tokens": 5}\n' "1:38: error: invalid JSON"
bad '# nothing\n' "1:1: error: the trace has no requests"
fi

exit $fail
