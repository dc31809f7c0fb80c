"""ctypes bindings of libcubesim.so (include/cubesim/cubesim.h).

The library is looked for, in order, where the environment variable
``CUBESIM_LIB`` says (the file itself, or a folder holding it), then in
``build/`` of the repository this package lives in (``python/cubesim`` ->
``../../build``), then by the dynamic linker's own search.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Optional

c_int = ctypes.c_int
c_char_p = ctypes.c_char_p
c_double = ctypes.c_double
c_uint64 = ctypes.c_uint64
c_size_t = ctypes.c_size_t


class Array(ctypes.Structure):
    """struct cubesim_array: a float32 array in memory, C order."""

    _fields_ = [
        ("name", c_char_p),
        ("ndim", c_int),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.POINTER(ctypes.c_float)),
    ]


class RunOpts(ctypes.Structure):
    """struct cubesim_run_opts, field for field."""

    _fields_ = [
        ("mode", c_int),
        ("inputs_dir", c_char_p),
        ("allow_random", c_int),
        ("save_inputs_dir", c_char_p),
        ("outputs_dir", c_char_p),
        ("expect_dir", c_char_p),
        ("rtol", c_double),
        ("atol", c_double),
        ("fail_on_nonfinite", c_int),
        ("seed", c_uint64),
        ("oplog_path", c_char_p),
        ("trace_path", c_char_p),
        ("trace_pes", c_char_p),
        ("trace_t0_ns", c_uint64),
        ("trace_t1_ns", c_uint64),
        ("max_events", c_uint64),
        ("max_sim_ns", c_uint64),
        ("timeout_s", c_double),
        ("progress", c_int),
        ("profile", c_int),
        ("inputs", ctypes.POINTER(Array)),
        ("n_inputs", c_size_t),
        ("keep_outputs", c_int),
        ("critical_path", c_int),
    ]


class Summary(ctypes.Structure):
    """struct cubesim_summary."""

    _fields_ = [
        ("sim_ps", c_uint64),
        ("kernel_ps", c_uint64),
        ("events", c_uint64),
        ("run_wall_s", c_double),
    ]


# cubesim_print_fn and a sweep's on_progress.
PrintFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), c_size_t)
ProgressFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, c_size_t, c_size_t, c_size_t)


class SweepOpts(ctypes.Structure):
    """struct cubesim_sweep_opts."""

    _fields_ = [
        ("out_dir", c_char_p),
        ("jobs", ctypes.c_uint),
        ("figures", c_int),
        ("resume", c_int),
        ("timeout_s", c_double),
        ("progress", c_int),
        ("list", c_int),
        ("print", PrintFn),
        ("print_ctx", ctypes.c_void_p),
        ("on_progress", ProgressFn),
        ("progress_ctx", ctypes.c_void_p),
    ]


class SweepResult(ctypes.Structure):
    """struct cubesim_sweep_result."""

    _fields_ = [
        ("n_points", c_size_t),
        ("n_failed", c_size_t),
        ("n_resumed", c_size_t),
        ("ranks", ctypes.c_uint),
        ("root", c_int),
        ("wall_s", c_double),
        ("events", c_uint64),
    ]


class ServeOpts(ctypes.Structure):
    """struct cubesim_serve_opts, field for field."""

    _fields_ = [
        ("model", c_char_p),
        ("topo_path", c_char_p),
        ("sets", ctypes.POINTER(c_char_p)),
        ("n_sets", c_size_t),
        ("tp", c_int),
        ("dp", c_int),
        ("precision", c_char_p),
        ("qps", c_double),
        ("trace_path", c_char_p),
        ("requests", c_uint64),
        ("duration_s", c_double),
        ("prompt_len", c_char_p),
        ("output_len", c_char_p),
        ("max_batch", ctypes.c_int64),
        ("max_batch_tokens", ctypes.c_int64),
        ("chunk_tokens", ctypes.c_int64),
        ("kv_block", ctypes.c_int64),
        ("policy", c_char_p),
        ("router", c_char_p),
        ("slo_ttft_ms", c_double),
        ("slo_tpot_ms", c_double),
        ("seed", c_uint64),
        ("find_capacity", c_int),
        ("out_dir", c_char_p),
        ("figures", c_int),
        ("exact_steps", c_int),
        ("check_steps", c_uint64),
        ("progress", c_int),
        ("json", c_int),
        ("print", PrintFn),
        ("print_ctx", ctypes.c_void_p),
    ]


def _candidates() -> list:
    env = os.environ.get("CUBESIM_LIB")
    out = []
    if env:
        p = Path(env)
        out.append(p / "libcubesim.so" if p.is_dir() else p)
    here = Path(__file__).resolve().parent
    out.append(here.parent.parent / "build" / "libcubesim.so")
    out.append(Path("libcubesim.so"))
    return out


def _load() -> ctypes.CDLL:
    tried = []
    for p in _candidates():
        if p.name != str(p) and not p.exists():
            tried.append(str(p))
            continue
        try:
            # RTLD_GLOBAL: kernel libraries loaded later (cubesim_kernels_load)
            # bind to the kernel API (tl_*) this library exports.
            return ctypes.CDLL(str(p), mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append(f"{p} ({e})")
    raise ImportError(
        "cannot load libcubesim.so (build it with cmake, or set CUBESIM_LIB); tried: "
        + "; ".join(tried)
    )


lib = _load()


def _fn(name: str, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_machine_p = ctypes.c_void_p
_result_p = ctypes.c_void_p

run_opts_init = _fn("cubesim_run_opts_init", None, ctypes.POINTER(RunOpts))
messages = _fn("cubesim_messages", c_char_p)
version = _fn("cubesim_version", c_char_p)
kernel_name = _fn("cubesim_kernel_name", c_char_p, c_size_t)
kernel_summary = _fn("cubesim_kernel_summary", c_char_p, c_size_t)
kernel_find = _fn("cubesim_kernel_find", c_int, c_char_p)
kernels_load = _fn("cubesim_kernels_load", c_int, c_char_p)
machine_load = _fn("cubesim_machine_load", c_int, c_char_p, ctypes.POINTER(_machine_p))
machine_set = _fn("cubesim_machine_set", c_int, _machine_p, c_char_p, c_char_p)
machine_copy = _fn("cubesim_machine_copy", _machine_p, _machine_p)
machine_free = _fn("cubesim_machine_free", None, _machine_p)
run = _fn(
    "cubesim_run",
    c_int,
    c_char_p,
    _machine_p,
    ctypes.POINTER(c_char_p),
    c_size_t,
    ctypes.POINTER(RunOpts),
    ctypes.POINTER(_result_p),
)
result_json = _fn("cubesim_result_json", c_char_p, _result_p)
result_text = _fn("cubesim_result_text", c_char_p, _result_p)
result_inputs_report = _fn("cubesim_result_inputs_report", c_char_p, _result_p)
result_summary = _fn("cubesim_result_summary", c_int, _result_p, ctypes.POINTER(Summary))
result_output = _fn("cubesim_result_output", ctypes.POINTER(Array), _result_p, c_size_t)
result_free = _fn("cubesim_result_free", None, _result_p)
sweep_opts_init = _fn("cubesim_sweep_opts_init", None, ctypes.POINTER(SweepOpts))
sweep = _fn("cubesim_sweep", c_int, c_char_p, c_char_p, ctypes.POINTER(SweepOpts),
            ctypes.POINTER(SweepResult))
bench_name = _fn("cubesim_bench_name", c_char_p, c_size_t)
bench = _fn("cubesim_bench", c_int, c_char_p, ctypes.POINTER(c_char_p), c_size_t, c_char_p,
            ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p))
serve_opts_init = _fn("cubesim_serve_opts_init", None, ctypes.POINTER(ServeOpts))
serve = _fn("cubesim_serve", c_int, ctypes.POINTER(ServeOpts), ctypes.POINTER(ctypes.c_void_p))
serve_check = _fn("cubesim_serve_check", c_int, ctypes.POINTER(ServeOpts), c_int)
free = _fn("cubesim_free", None, ctypes.c_void_p)


def text(b: Optional[bytes]) -> str:
    """A C string as text (UTF-8; bytes that are not become U+FFFD)."""
    return b.decode("utf-8", "replace") if b is not None else ""
