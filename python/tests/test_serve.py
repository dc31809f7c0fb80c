"""cubesim.serve: the summary of `cubesim serve --json`, through the library."""

import json
import os
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
