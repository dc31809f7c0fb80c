"""cubesim.serve: the summary of `cubesim serve --json`, through the library."""

import json
import os
import re
import subprocess

import pytest

import cubesim


def test_serve_matches_the_command():
    s = cubesim.serve("llama3-8b", qps=10, requests=12, output_len=8, prompt_len=64, seed=3)
    assert s["requests"] == 12 and s["completed"] == 12
    cmd = os.environ.get("CUBESIM_BIN")
    if cmd:
        out = subprocess.run([cmd, "serve", "--model", "llama3-8b", "--qps", "10", "--requests",
                              "12", "--output-len", "8", "--prompt-len", "64", "--seed", "3",
                              "--json"], check=True, capture_output=True, text=True).stdout
        c = json.loads(out)
        del c["wall_s"], s["wall_s"]
        assert c == s


def test_serve_options_and_errors():
    s = cubesim.serve("llama3-8b", qps=20, requests=8, output_len="uniform:2:6", prompt_len=32,
                      policy="sarathi", chunk_tokens=64, dp=2, router="least-loaded")
    assert s["completed"] == 8
    with pytest.raises(cubesim.Error) as e:
        cubesim.serve("llama3-8b", qps=1, policy="orca")
    assert e.value.status == 2
    assert "--policy orca: expected vllm, sarathi or static" in str(e.value)
    with pytest.raises(cubesim.Error) as e:
        cubesim.serve("llama3-8", qps=1)
    assert "did you mean 'llama3-8b'?" in str(e.value)
    with pytest.raises(TypeError):
        cubesim.serve("llama3-8b", qps=1, qsp=2)


SMALL = os.path.join(os.path.dirname(__file__), "..", "..", "topologies", "small.yaml")


def _no_wall(text):
    """The text summary without its wall-clock figures (the step model's line)."""
    return re.sub(r"in [0-9.]+ s; serving loop [0-9.]+ s", "", text)


def test_serve_text_and_check_steps_match_the_command():
    args = dict(topo=SMALL, qps=200, requests=4, prompt_len="uniform:5:40",
                output_len="uniform:2:5", policy="sarathi", chunk_tokens=32, check_steps=2)
    t = cubesim.serve("llama3.2-1b", text=True, **args)
    assert t.startswith("serve llama3.2-1b, policy sarathi")
    assert re.search(r"step check: \d+ off-grid iterations, grid vs exact simulation", t)
    cmd = os.environ.get("CUBESIM_BIN")
    if cmd:
        argv = [cmd, "serve", "--model", "llama3.2-1b"]
        for k, v in args.items():
            argv += ["--" + k.replace("_", "-"), str(v)]
        c = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        assert _no_wall(c) == _no_wall(t)


def test_serve_exact_steps_duration_and_check():
    s = cubesim.serve("llama3.2-1b", topo=SMALL, qps=200, requests=4,
                      prompt_len="uniform:5:40", output_len=3, exact_steps=True)
    assert s["completed"] == 4
    # duration_s alone: every request that arrives in it, as in the command
    # (not the default --requests, 1000, at most)
    s = cubesim.serve("llama3.2-1b", qps=1100, duration_s=1, prompt_len=8, output_len=1,
                      max_batch=1024, max_batch_tokens=65536)
    assert s["requests"] > 1000
    assert cubesim.serve("llama3-8b", qps=1, check=True) is None
    with pytest.raises(cubesim.Error) as e:
        cubesim.serve("llama3-8b", qps=1, exact_steps=True, check_steps=3, check=True)
    assert e.value.status == 2
    assert "--check-steps compares the grid with --exact-steps: give one" in str(e.value)
