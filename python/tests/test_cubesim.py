"""Tests of the cubesim Python package against the cubesim command.

Run by tests/python.sh (CTest's script.python) with CUBESIM_BIN and
CUBESIM_LIB set; each compares the package with what ``cubesim run``
prints for the same run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List, Tuple

import numpy as np
import pytest

import cubesim

SRC = Path(os.environ.get("CUBESIM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("CUBESIM_BIN", str(SRC / "build" / "cubesim"))
SMALL = str(SRC / "topologies" / "small.yaml")

# Keys that depend on the host's clock, not on the simulation.
WALL_KEYS = {"wall_s", "events_per_s", "run_wall_s"}


def cli(*args: str) -> Tuple[int, str, str]:
    p = subprocess.run([BIN, *args], capture_output=True, text=True, cwd=SRC)
    return p.returncode, p.stdout, p.stderr


def sets(params: dict) -> List[str]:
    out: List[str] = []
    for k, v in params.items():
        out += ["--set", f"{k}={v}"]
    return out


RUNS = [
    ("gemm", None, {"m": 128, "n": 96, "k": 64}),
    ("softmax", SMALL, {}),
    ("gqa_decode", SMALL, {"seq_len": 512}),
    ("gqa_prefill", None, {"seq_len": 1024, "q_len": 1024}),
    ("llm_layer", SMALL, {"past_len": 20, "q_len": 2, "tp": 2}),
    ("tt_matmul", str(SRC / "topologies" / "tt_wormhole_n150.yaml"), {"m": 128, "k": 96, "n": 160}),
    ("gemm", None, {"m": 256, "pe.dma.bw_gbps": 256}),
]


@pytest.mark.parametrize("kernel,topo,params", RUNS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(RUNS)])
def test_run_matches_cli_json(kernel, topo, params):
    """cubesim.run gives every --json field of cubesim run, value for value."""
    args = ["run", kernel, "--json", "--profile", *sets(params)]
    if topo:
        args += ["--topo", topo]
    rc, out, err = cli(*args)
    assert rc == 0, err
    want = json.loads(out)
    r = cubesim.run(kernel, topo=topo, profile=True, **params)
    got = r.raw
    assert set(got) - WALL_KEYS == set(want) - WALL_KEYS
    for key in set(want) - WALL_KEYS:
        assert got[key] == want[key], key
        assert getattr(r, key) == want[key], key
    # The same bytes, too: the package reads the text the command prints.
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def test_critical_path_matches_cli():
    """critical_path=True gives the command's critical_path, summing to the kernel time."""
    rc, out, err = cli("run", "gemm", "--topo", SMALL, "--json", "--critical-path",
                       "--set", "m=64", "--set", "n=64", "--set", "k=64")
    assert rc == 0, err
    want = json.loads(out)["critical_path"]
    r = cubesim.run("gemm", topo=SMALL, critical_path=True, m=64, n=64, k=64)
    assert r.critical_path == want
    assert sum(want["by_class"].values()) == r.kernel_ps
    assert "critical_path" not in cubesim.run("gemm", topo=SMALL, m=64, n=64, k=64).raw


def test_result_attributes():
    r = cubesim.run("gemm", topo=SMALL, m=64, n=64, k=64)
    assert r.sim_ns > 0 and 0 < r.kernel_ps <= r.sim_ps
    assert r.bound_by in r.bounds
    assert "pe_gemm" in r.utilisation
    assert r["events"] == r.raw["events"]
    assert "sim_ns" in dir(r)
    assert r.outputs == {}
    assert "gemm" in r.text
    with pytest.raises(AttributeError):
        r.no_such_key


def test_machine_variants():
    """A faster DMA never makes gemm slower; the machine passed as topo= is used."""
    base = cubesim.Machine(SMALL)
    fast = base.copy().set(**{"pe.dma.bw_gbps": 1024})
    assert fast.sets == {"pe.dma.bw_gbps": "1024"} and base.sets == {}
    slow_r = cubesim.run("gemm", topo=base, m=256, n=256, k=256)
    fast_r = cubesim.run("gemm", topo=fast, m=256, n=256, k=256)
    assert fast_r.kernel_ps < slow_r.kernel_ps
    rc, out, err = cli("run", "gemm", "--json", "--topo", SMALL, "--set", "pe.dma.bw_gbps=1024",
                       *sets({"m": 256, "n": 256, "k": 256}))
    assert rc == 0, err
    assert json.loads(out)["kernel_ps"] == fast_r.kernel_ps


def test_data_mode_inputs_as_arrays(tmp_path):
    """Inputs given as arrays give the outputs the CLI writes from the same .npy files."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((24, 32)).astype(np.float32)
    params = {"m": 40, "n": 32, "k": 24, "tile_m": 16, "tile_n": 16, "tile_k": 16, "dtype": "bf16"}
    r = cubesim.run("gemm", topo=SMALL, mode="data", inputs={"a": a, "b": b}, **params)
    assert set(r.outputs) == {"c"} and r.outputs["c"].shape == (40, 32)
    assert r.outputs["c"].dtype == np.float32
    ind, outd = tmp_path / "in", tmp_path / "out"
    ind.mkdir()
    np.save(ind / "a.npy", a)
    np.save(ind / "b.npy", b)
    rc, out, err = cli("run", "gemm", "--topo", SMALL, "--mode", "data", "--inputs", str(ind),
                       "--outputs", str(outd), "--json", *sets(params))
    assert rc == 0, err
    want = np.load(outd / "c.npy")
    np.testing.assert_array_equal(r.outputs["c"], want)
    assert np.abs(want - a @ b).max() < 0.1     # bf16 rounding of a 24-term sum
    assert json.loads(out)["sim_ns"] == r.sim_ns
    # The folder form of inputs= and outputs= reads and writes the same files.
    r2 = cubesim.run("gemm", topo=SMALL, mode="data", inputs=ind, outputs=tmp_path / "o2",
                     **params)
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "c.npy"), want)
    np.testing.assert_array_equal(r2.outputs["c"], want)


def test_data_mode_generated_inputs_match_cli(tmp_path):
    """With no inputs, the generated ones (seed) give the CLI's outputs."""
    r = cubesim.run("softmax", topo=SMALL, mode="data", seed=7)
    rc, _, err = cli("run", "softmax", "--topo", SMALL, "--mode", "data", "--seed", "7",
                     "--outputs", str(tmp_path))
    assert rc == 0, err
    np.testing.assert_array_equal(r.outputs["y"], np.load(tmp_path / "y.npy"))
    assert "generated" in r.inputs_report


def cli_messages(err: str) -> str:
    """The CLI's messages without its 'cubesim run: ' prefix."""
    return "\n".join(line.removeprefix("cubesim run: ") for line in err.splitlines())


@pytest.mark.parametrize("kernel,params,status", [
    ("gemmm", {}, 2),
    ("no_such_kernel_at_all", {}, 2),
    ("gemm", {"m": "abc"}, 2),
    ("gemm", {"dtype": "fp64"}, 2),
    ("gemm", {"pe.dma.bw_gbps": "fast"}, 2),
    ("gemm", {"tile_m": 4096, "tile_k": 4096}, 2),
])
def test_errors_carry_the_cli_message(kernel, params, status):
    rc, _, err = cli("run", kernel, *sets(params))
    assert rc == status
    with pytest.raises(cubesim.Error) as e:
        cubesim.run(kernel, **params)
    assert e.value.status == status
    assert str(e.value) == cli_messages(err)


def test_failed_run_carries_the_cli_message():
    """A kernel that fails (here: past its event budget): status 1, the CLI's notes too."""
    rc, _, err = cli("run", "gemm", "--topo", SMALL, "--max-events", "50")
    assert rc == 1
    with pytest.raises(cubesim.Error) as e:
        cubesim.run("gemm", topo=SMALL, max_events=50)
    assert e.value.status == 1
    assert str(e.value) == cli_messages(err)
    assert len(e.value.messages) > 1


def test_error_options():
    with pytest.raises(cubesim.Error, match="needs --mode data"):
        cubesim.run("gemm", outputs="/tmp/never", save_inputs="/tmp/never")
    with pytest.raises(cubesim.Error, match="--mode fast: expected oplog or data"):
        cubesim.run("gemm", mode="fast")
    with pytest.raises(cubesim.Error, match="event budget exceeded") as e:
        cubesim.run("gemm", max_events=50)
    assert e.value.status == 1
    with pytest.raises(cubesim.Error, match="no such file|cannot|No such"):
        cubesim.Machine(SRC / "topologies" / "no_such.yaml")


def test_kernels_lists_the_cli_kernels():
    rc, out, _ = cli("kernels", "--brief")
    assert rc == 0
    want = [line.split(None, 1)[0] for line in out.splitlines()]
    got = cubesim.kernels()
    assert [k.name for k in got] == want
    assert all(k.summary for k in got)


def test_repeated_runs_are_identical():
    first = cubesim.run("gqa_decode", topo=SMALL, seq_len=256).raw
    for _ in range(3):
        assert cubesim.run("gqa_decode", topo=SMALL, seq_len=256).raw == first


def test_example_machine_sweep(tmp_path):
    """examples/python/machine_sweep.py runs and prints its table."""
    import sys

    p = subprocess.run([sys.executable, str(SRC / "examples" / "python" / "machine_sweep.py"),
                        "--out", str(tmp_path / "f.png")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert "kernel_us" in lines[1] and len(lines) >= 7
    times = [float(line.split()[1]) for line in lines[2:7]]
    assert times == sorted(times, reverse=True)   # more HBM bandwidth, never slower


SPEC = {"version": 1, "name": "py_sweep", "kernel": "gemm", "topology": SMALL,
        "params": {"tile_m": 32, "tile_n": 32, "tile_k": 32},
        "grid": {"dtype": ["bf16", "fp32"], "m": [64, 128]}}


def test_sweep_rows_match_runs():
    """cubesim.sweep gives one row per point, each with cubesim.run's numbers."""
    rows = cubesim.sweep(SPEC, jobs=2, frame=False)
    assert [(r["dtype"], r["m"]) for r in rows] == [("bf16", 64), ("bf16", 128),
                                                    ("fp32", 64), ("fp32", 128)]
    for row in rows:
        assert row["status"] == "ok"
        r = cubesim.run("gemm", topo=SMALL, tile_m=32, tile_n=32, tile_k=32, dtype=row["dtype"],
                        m=row["m"])
        assert row["sim_ns"] == r.sim_ns and row["kernel_ps"] == r.kernel_ps
        # sweep.json keeps 17 significant digits, run --json 15.
        assert row["utilisation.pe_gemm"] == pytest.approx(r.utilisation["pe_gemm"], rel=1e-14)


def test_sweep_file_matches_cli(tmp_path):
    """A spec file gives the sweep.json of cubesim sweep (wall-clock keys aside)."""
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(SPEC))
    rows = cubesim.sweep(spec, out=tmp_path / "py", frame=False)
    rc, _, err = cli("sweep", str(spec), "--out", str(tmp_path / "cli"), "--no-figures",
                     "--no-progress")
    assert rc == 0, err

    def strip(d):
        if isinstance(d, dict):
            return {k: strip(v) for k, v in d.items() if k not in
                    {"wall_s", "events_per_s", "peak_rss_kib"}}
        if isinstance(d, list):
            return [strip(v) for v in d]
        return d
    want = strip(json.loads((tmp_path / "cli" / "sweep.json").read_text()))
    got = strip(json.loads((tmp_path / "py" / "sweep.json").read_text()))
    assert got == want
    assert len(rows) == 4


def test_sweep_progress():
    """progress is called at the start and as each point finishes, ending at all done."""
    seen = []
    rows = cubesim.sweep(SPEC, jobs=2, frame=False, progress=lambda *a: seen.append(a))
    assert len(rows) == 4
    assert seen[0] == (0, 4, 0) and seen[-1] == (4, 4, 0)
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)


def test_sweep_bad_spec():
    with pytest.raises(cubesim.Error) as e:
        cubesim.sweep({"version": 1, "kernel": "gemmm", "grid": {"m": [64]}}, frame=False)
    assert e.value.status == 2
    assert "<spec>:" in str(e.value) and "gemmm" in str(e.value)


def test_bench_matches_cli():
    got = cubesim.bench("engine-hold", procs=10, iters=100)
    rc, out, err = cli("bench", "run", "engine-hold", "--set", "procs=10", "--set", "iters=100",
                       "--json")
    assert rc == 0, err
    want = json.loads(out)
    for k in ("bench", "procs", "iters", "events", "switches", "sim_end_ns"):
        assert got[k] == want[k], k
    assert "engine-hold" in cubesim.benches()
    with pytest.raises(cubesim.Error, match="no bench 'engine-hld'; did you mean 'engine-hold'"):
        cubesim.bench("engine-hld")


def test_user_kernel_library(tmp_path):
    """A kernel library binds to the tl_* the package's library exports."""
    so = tmp_path / "libaxpy.so"
    subprocess.run(["cc", "-std=c11", "-O1", "-shared", "-fPIC", "-I", str(SRC / "include"),
                    str(SRC / "examples" / "user_kernel" / "axpy.c"), "-o", str(so)], check=True)
    if "axpy" not in [k.name for k in cubesim.kernels()]:
        cubesim.load_kernels(so)
    assert "axpy" in [k.name for k in cubesim.kernels()]
    r = cubesim.run("axpy", topo=SMALL, n=4096)
    rc, out, err = cli("run", "axpy", "--kernels", str(so), "--topo", SMALL, "--set", "n=4096",
                       "--json")
    assert rc == 0, err
    assert r.raw == json.loads(out)
    with pytest.raises(cubesim.Error, match="axpy"):
        cubesim.load_kernels(so)        # a kernel named like a known one is refused


def test_bad_in_memory_inputs():
    a = np.zeros((4, 4), np.float32)
    for inputs in ({"../a": a}, {"": a}, {"a b": a}):
        with pytest.raises(cubesim.Error, match="expected a tensor name") as e:
            cubesim.run("gemm", topo=SMALL, mode="data", inputs=inputs, m=4, n=4, k=4)
        assert e.value.status == 2
    with pytest.raises(cubesim.Error, match="inputs in memory needs --mode data"):
        cubesim.run("gemm", inputs={"a": a})
    # A shape that disagrees with the parameters: the runtime's own message.
    with pytest.raises(cubesim.Error, match=r"a\.npy") as e:
        cubesim.run("gemm", topo=SMALL, mode="data", inputs={"a": a}, m=8, n=4, k=4)
    assert e.value.status == 2
