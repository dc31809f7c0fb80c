"""cubesim from Python: run kernels on simulated CUBE-based NPUs.

A thin layer over libcubesim.so, the library ``cubesim run`` itself goes
through, so a run here gives the numbers of the command line::

    import cubesim
    r = cubesim.run("gemm", m=512, n=512, k=512)
    print(r.sim_ns, r.bound_by, r.utilisation["PE_GEMM"])

    fast = cubesim.Machine().set(**{"pe.dma.bw_gbps": 256})
    r2 = cubesim.run("gemm", topo=fast, m=512, n=512, k=512)

    import numpy as np
    a = np.ones((64, 32), np.float32); b = np.ones((32, 48), np.float32)
    r3 = cubesim.run("gemm", mode="data", inputs={"a": a, "b": b},
                     m=64, n=48, k=32, dtype="fp32")
    r3.outputs["c"]            # a numpy array, [64, 48]

Errors (an unknown kernel, a bad parameter, a kernel that fails) raise
:class:`cubesim.Error` with the messages ``cubesim run`` prints.

The library is found in ``build/`` of the repository, or where the
environment variable ``CUBESIM_LIB`` says.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from . import _lib

__all__ = ["Error", "Machine", "Result", "Kernel", "run", "kernels", "load_kernels", "version",
           "sweep", "bench", "benches", "serve"]

PathLike = Union[str, "os.PathLike[str]"]


class Error(Exception):
    """A run or a machine that cubesim refused, or a kernel that failed.

    ``str(e)`` is the messages as ``cubesim run`` prints them, one per
    line, without the command's ``cubesim run:`` prefix (located ones read
    ``FILE:LINE:COL: error: ...``). ``status`` is the command's exit
    status: 1 the kernel failed (kernel error, deadlock, budget), 2 bad
    input. ``messages`` is the list of lines.
    """

    def __init__(self, status: int, text: str):
        self.status = status
        self.messages: List[str] = [line for line in text.splitlines() if line]
        super().__init__(text.rstrip("\n") or f"cubesim failed (status {status})")


def _raise_if(status: int) -> None:
    if status != 0:
        raise Error(status, _lib.text(_lib.messages()))


def version() -> str:
    """The library's version."""
    return _lib.text(_lib.version())


class Kernel(Tuple[str, str]):
    """A kernel's (name, summary)."""

    @property
    def name(self) -> str:
        return self[0]

    @property
    def summary(self) -> str:
        return self[1]


def kernels() -> List[Kernel]:
    """The known kernels, built-ins first, as (name, summary) pairs."""
    out = []
    i = 0
    while True:
        n = _lib.kernel_name(i)
        if n is None:
            return out
        out.append(Kernel((_lib.text(n), _lib.text(_lib.kernel_summary(i)))))
        i += 1


def load_kernels(path: PathLike) -> None:
    """Load the kernels a shared object exports (``--kernels LIB.so``)."""
    _raise_if(_lib.kernels_load(os.fsencode(os.fspath(path))))


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


class Machine:
    """A machine: a topology file, or the built-in default (``path=None``).

    :meth:`set` changes topology parameters by their dotted YAML path
    (``pe.dma.bw_gbps``; ``issue_cost.OP_ns`` is short for
    ``pe.cpu.issue_cost_ns.OP``) and returns the machine, so variants read
    ``Machine().set(**{"hbm.bw_gbps": 800})``. :meth:`copy` gives one to
    change apart.
    """

    def __init__(self, path: Optional[PathLike] = None):
        h = ctypes.c_void_p()
        p = os.fsencode(os.fspath(path)) if path is not None else None
        _raise_if(_lib.machine_load(p, ctypes.byref(h)))
        self._h: Optional[int] = h.value
        self.path = None if path is None else os.fspath(path)
        self.sets: Dict[str, str] = {}

    def set(self, **keys: Any) -> "Machine":
        """Set topology parameters (keys are dotted paths); returns self."""
        for k, v in keys.items():
            _raise_if(_lib.machine_set(self._h, k.encode(), _value(v).encode()))
            self.sets[k] = _value(v)
        return self

    def copy(self) -> "Machine":
        """A copy of this machine."""
        m = Machine.__new__(Machine)
        h = _lib.machine_copy(self._h)
        if not h:
            raise MemoryError("cubesim: out of memory copying a machine")
        m._h, m.path, m.sets = h, self.path, dict(self.sets)
        return m

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            try:
                _lib.machine_free(h)
            except (AttributeError, TypeError):   # the interpreter is shutting down
                pass

    def __repr__(self) -> str:
        what = repr(self.path) if self.path else "default"
        sets = ", ".join(f"{k}={v}" for k, v in self.sets.items())
        return f"Machine({what}{', ' + sets if sets else ''})"


class Result:
    """A run's summary: the keys of ``cubesim run --json`` as attributes.

    ``r.sim_ns``, ``r.kernel_ps``, ``r.bounds``, ``r.bound_by``,
    ``r.utilisation``, ``r.busy_ps``, ``r.link_bytes``, ``r.profile`` (with
    ``profile=True``), ``r.critical_path`` (with ``critical_path=True``) ... and ``r.raw``, the whole dict; ``r["sim_ns"]``
    works too. ``r.outputs`` holds the outputs by tensor name (numpy
    arrays, float32) in data mode, ``r.inputs_report`` where each input
    came from, ``r.text`` the summary as ``cubesim run`` prints it, and
    ``r.run_wall_s`` the host seconds of the run.
    """

    def __init__(self, raw: Dict[str, Any], text: str, inputs_report: str,
                 outputs: Dict[str, Any], run_wall_s: float):
        self.raw = raw
        self.text = text
        self.inputs_report = inputs_report
        self.outputs = outputs
        self.run_wall_s = run_wall_s

    def __getattr__(self, name: str) -> Any:
        raw = self.__dict__.get("raw", {})
        if name in raw:
            return raw[name]
        raise AttributeError(f"Result has no {name!r} (keys: {', '.join(raw)})")

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __contains__(self, key: str) -> bool:
        return key in self.raw

    def keys(self) -> Iterator[str]:
        return iter(self.raw)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.raw))

    def __repr__(self) -> str:
        return (f"Result(kernel={self.raw.get('kernel')!r}, sim_ns={self.raw.get('sim_ns')}, "
                f"bound_by={self.raw.get('bound_by')!r})")


def _arrays(inputs: Mapping[str, Any]) -> Tuple[Any, list]:
    """struct cubesim_array entries for the inputs, and what keeps them alive."""
    import numpy as np

    keep: list = []
    arr = (_lib.Array * len(inputs))()
    for i, (name, a) in enumerate(inputs.items()):
        a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        nm = name.encode()
        keep += [a, shape, nm]
        arr[i].name = nm
        arr[i].ndim = a.ndim
        arr[i].shape = shape
        arr[i].data = a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    return arr, keep


def _outputs(h: int) -> Dict[str, Any]:
    import numpy as np

    out = {}
    i = 0
    while True:
        p = _lib.result_output(h, i)
        if not p:
            return out
        a = p.contents
        shape = tuple(a.shape[d] for d in range(a.ndim))
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        data = np.ctypeslib.as_array(a.data, shape=(n,)).copy() if n else np.zeros(0, np.float32)
        out[_lib.text(a.name)] = data.reshape(shape)
        i += 1


def _b(p: Optional[PathLike]) -> Optional[bytes]:
    return None if p is None else os.fsencode(os.fspath(p))


def run(kernel: str, topo: Union[Machine, PathLike, None] = None, mode: str = "oplog",
        inputs: Union[Mapping[str, Any], PathLike, None] = None,
        outputs: Union[bool, PathLike, None] = None, *, profile: bool = False,
        critical_path: bool = False,
        seed: Optional[int] = None, allow_random: bool = False,
        save_inputs: Optional[PathLike] = None, expect: Optional[PathLike] = None,
        rtol: Optional[float] = None, atol: Optional[float] = None,
        fail_on_nonfinite: bool = False, oplog: Optional[PathLike] = None,
        trace: Optional[PathLike] = None, trace_pes: Optional[str] = None,
        trace_window: Optional[Tuple[int, int]] = None, max_events: Optional[int] = None,
        max_sim_ns: Optional[int] = None, timeout_s: Optional[float] = None,
        progress: bool = False, **params: Any) -> Result:
    """Run ``kernel`` on every PE of a machine, as ``cubesim run`` does.

    :param kernel: a kernel's name (:func:`kernels` lists them).
    :param topo: a :class:`Machine`, a topology file, or None (the built-in
        default machine).
    :param mode: ``"oplog"`` (timing only) or ``"data"`` (real numbers).
    :param inputs: data mode: a dict of arrays by tensor name (converted to
        float32), or a folder of NAME.npy files (``--inputs DIR``).
    :param outputs: data mode: a folder to write NAME.npy outputs to
        (``--outputs DIR``), or False not to keep them; by default they are
        returned in ``result.outputs``.
    :param params: the kernel's parameters (``--set k=v``); a dotted key
        (``**{"pe.dma.bw_gbps": 256}``) sets a topology parameter of this
        run alone.
    The other keywords are the options of ``cubesim run`` of the same
    names (``trace_window=(t0_ns, t1_ns)``).
    :returns: a :class:`Result`.
    :raises Error: with the command's messages and exit status.
    """
    o = _lib.RunOpts()
    _lib.run_opts_init(ctypes.byref(o))
    modes = {"oplog": 0, "op_log": 0, "data": 1}
    if mode not in modes:
        raise Error(2, f"error: --mode {mode}: expected oplog or data")
    o.mode = modes[mode]
    keep: list = []
    if isinstance(inputs, Mapping):
        arr, keep = _arrays(inputs)
        o.inputs = ctypes.cast(arr, ctypes.POINTER(_lib.Array))
        o.n_inputs = len(inputs)
        keep.append(arr)
    elif inputs is not None:
        o.inputs_dir = _b(inputs)
    if outputs is not None and outputs is not False and outputs is not True:
        o.outputs_dir = _b(outputs)
    o.keep_outputs = 0 if outputs is False else 1
    o.profile = int(profile)
    o.critical_path = int(critical_path)
    o.allow_random = int(allow_random)
    o.fail_on_nonfinite = int(fail_on_nonfinite)
    o.progress = int(progress)
    o.save_inputs_dir = _b(save_inputs)
    o.expect_dir = _b(expect)
    o.oplog_path = _b(oplog)
    o.trace_path = _b(trace)
    o.trace_pes = None if trace_pes is None else str(trace_pes).encode()
    if trace_window is not None:
        o.trace_t0_ns, o.trace_t1_ns = int(trace_window[0]), int(trace_window[1] or 0)
    for name, v in (("rtol", rtol), ("atol", atol), ("timeout_s", timeout_s)):
        if v is not None:
            setattr(o, name, float(v))
    for name, v in (("seed", seed), ("max_events", max_events), ("max_sim_ns", max_sim_ns)):
        if v is not None:
            setattr(o, name, int(v))

    sets = [f"{k}={_value(v)}".encode() for k, v in params.items()]
    c_sets = (ctypes.c_char_p * max(len(sets), 1))(*sets)
    owned = None
    if isinstance(topo, Machine) or topo is None:
        m = topo
    else:
        m = owned = Machine(topo)
    h = ctypes.c_void_p()
    status = _lib.run(kernel.encode(), m._h if m is not None else None, c_sets, len(sets),
                      ctypes.byref(o), ctypes.byref(h))
    msgs = _lib.text(_lib.messages())
    del owned
    try:
        if status != 0:
            raise Error(status, msgs)
        raw = json.loads(_lib.text(_lib.result_json(h)))
        s = _lib.Summary()
        _lib.result_summary(h, ctypes.byref(s))
        outs = _outputs(h.value) if o.mode == 1 and o.keep_outputs else {}
        return Result(raw, _lib.text(_lib.result_text(h)),
                      _lib.text(_lib.result_inputs_report(h)), outs, s.run_wall_s)
    finally:
        if h.value:
            _lib.result_free(h)


def _rows(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One flat dict per point of a sweep.json: panel, kernel, parameters,
    status and the summary's scalars; dict-valued keys one level deep as
    "key.sub" (utilisation.pe_gemm, busy_ps.hbm_channel, ...)."""
    rows = []
    for pn in doc.get("panels", []):
        for pt in pn.get("points", []):
            row: Dict[str, Any] = {"panel": pn.get("name"), "kernel": pn.get("kernel")}
            row.update(pn.get("params", {}))
            row.update(pt.get("params", {}))
            for k, v in pt.items():
                if k == "params":
                    continue
                if isinstance(v, dict):
                    for sk, sv in v.items():
                        if not isinstance(sv, (dict, list)):
                            row[f"{k}.{sk}"] = sv
                elif not isinstance(v, list):
                    row[k] = v
            rows.append(row)
    return rows


def sweep(spec: Union[Mapping[str, Any], PathLike], jobs: int = 1,
          out: Optional[PathLike] = None, figures: bool = False,
          timeout_s: Optional[float] = None, frame: Optional[bool] = None,
          progress: Optional[Callable[[int, int, int], None]] = None) -> Any:
    """Run a sweep spec (docs/sweeps.md), as ``cubesim sweep`` does.

    :param spec: a spec as a dict (the YAML's structure), or a spec file.
    :param jobs: worker processes (forked from this one).
    :param out: where sweep.json, the points and the report go; by default a
        temporary directory, removed afterwards.
    :param figures: draw the gnuplot figures (into ``out``).
    :param frame: return a pandas DataFrame (default: when pandas is
        installed), else a list of dicts, one per point.
    :param progress: called as ``progress(done, todo, failed)`` when the
        sweep starts and as its points finish (``todo`` points to run now).
    :returns: the rows, one per point (see :func:`_rows` for the columns);
        a point that failed has its ``status`` and ``error`` columns. The
        whole sweep.json is the ``attrs["sweep"]`` of a DataFrame.
    :raises Error: for a bad spec or bad options (status 2).
    """
    import tempfile

    o = _lib.SweepOpts()
    _lib.sweep_opts_init(ctypes.byref(o))
    o.jobs = int(jobs)
    o.figures = int(figures)
    if timeout_s is not None:
        o.timeout_s = float(timeout_s)
    if progress is not None:
        # Kept referenced until the call returns.
        o.on_progress = _lib.ProgressFn(lambda _ctx, done, todo, failed:
                                        progress(done, todo, failed))
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="cubesim-sweep-")
        out = tmp.name
    try:
        o.out_dir = _b(out)
        if isinstance(spec, Mapping):
            status = _lib.sweep(None, json.dumps(spec).encode(), ctypes.byref(o), None)
        else:
            status = _lib.sweep(_b(spec), None, ctypes.byref(o), None)
        if status == 2:
            _raise_if(status)
        with open(Path(out) / "sweep.json", encoding="utf-8") as f:
            doc = json.load(f)
    finally:
        if tmp is not None:
            tmp.cleanup()
    rows = _rows(doc)
    if frame is None or frame:
        try:
            import pandas as pd
        except ImportError:
            if frame:
                raise
            return rows
        df = pd.DataFrame(rows)
        df.attrs["sweep"] = doc
        return df
    return rows


def benches() -> List[str]:
    """The benches' names (``cubesim bench list``)."""
    out = []
    while True:
        n = _lib.bench_name(len(out))
        if n is None:
            return out
        out.append(_lib.text(n))


def bench(name: str, out: Optional[PathLike] = None, jobs: int = 1, **params: Any) -> Any:
    """Run a bench as ``cubesim bench run NAME --json`` and return its JSON
    (parsed). ``params`` are its ``--set`` values; ``out`` its ``--out``."""
    sets = [f"{k}={_value(v)}".encode() for k, v in params.items()]
    c_sets = (ctypes.c_char_p * max(len(sets), 1))(*sets)
    p = ctypes.c_void_p()
    status = _lib.bench(name.encode(), c_sets, len(sets), _b(out), int(jobs), ctypes.byref(p))
    _raise_if(status)
    try:
        return json.loads(_lib.text(ctypes.cast(p, ctypes.c_char_p).value))
    finally:
        _lib.free(p)


def serve(model: str, qps: Optional[float] = None, trace: Optional[PathLike] = None,
          topo: Optional[PathLike] = None, sets: Optional[Mapping[str, Any]] = None,
          out: Optional[PathLike] = None, figures: bool = True, text: bool = False,
          check: bool = False, **opts: Any) -> Any:
    """Serve requests for ``model`` as ``cubesim serve ... --json`` does
    (docs/serving.md) and return its summary (parsed). ``qps`` or
    ``trace`` give the arrivals; ``sets`` are topology ``--set`` values;
    ``out`` is ``--out``. The other options by their names without
    dashes, ``-`` as ``_``: ``requests``, ``duration_s``, ``tp``, ``dp``,
    ``precision``, ``prompt_len``, ``output_len`` (``512``,
    ``"uniform:64:512"``, ``"lognormal:300:0.6"``), ``max_batch``,
    ``max_batch_tokens``, ``chunk_tokens``, ``kv_block``, ``policy``,
    ``router``, ``slo_ttft_ms``, ``slo_tpot_ms``, ``seed``,
    ``find_capacity``, ``exact_steps``, ``check_steps``, ``progress``.
    As in the command, ``duration_s`` without ``requests`` serves every
    request that arrives in it.

    :param text: return the summary as ``cubesim serve`` prints it without
        ``--json`` (a str; with ``check_steps``, its line on the grid's
        error last) instead of the parsed JSON.
    :param check: check the options and run nothing (returns None).
    :raises Error: bad options (status 2), a step that failed to simulate
        or an output that could not be written (status 1).
    """
    o = _lib.ServeOpts()
    _lib.serve_opts_init(ctypes.byref(o))
    o.model = model.encode()
    o.qps = float(qps or 0)
    o.trace_path = _b(trace)
    o.topo_path = _b(topo)
    o.out_dir = _b(out)
    o.figures = int(bool(figures))
    set_list = [f"{k}={_value(v)}".encode() for k, v in (sets or {}).items()]
    c_sets = (ctypes.c_char_p * max(len(set_list), 1))(*set_list)
    o.sets = c_sets
    o.n_sets = len(set_list)
    fields = dict(_lib.ServeOpts._fields_)
    for k, v in opts.items():
        if k not in fields or k in ("sets", "n_sets", "model", "trace_path", "topo_path",
                                    "out_dir", "figures", "json", "print", "print_ctx"):
            raise TypeError(f"serve() got an unexpected option '{k}'")
        if fields[k] is ctypes.c_char_p:
            setattr(o, k, _value(v).encode())
        elif k in ("find_capacity", "exact_steps", "progress"):
            setattr(o, k, int(bool(v)))
        else:
            setattr(o, k, v)
    if o.duration_s > 0 and "requests" not in opts:
        o.requests = 0
    if check:
        _raise_if(_lib.serve_check(ctypes.byref(o), 0))
        return None
    pieces: List[bytes] = []
    if text:
        # Kept referenced until the call returns.
        o.print = _lib.PrintFn(lambda _ctx, s, n: pieces.append(ctypes.string_at(s, n)))
    p = ctypes.c_void_p()
    status = _lib.serve(ctypes.byref(o), None if text else ctypes.byref(p))
    _raise_if(status)
    if text:
        return b"".join(pieces).decode("utf-8", "replace")
    try:
        return json.loads(_lib.text(ctypes.cast(p, ctypes.c_char_p).value))
    finally:
        _lib.free(p)
