"""npc.compile's process-wide and per-thread state: the directories that are npc's and
NumPy's own, the counters (stats, reset, compile_times), the registered backends, arrays
marked dynamic and the thread's modes (compiling disabled, frozen).
"""
import atexit
import contextlib
import os
import sys
import threading
import weakref

import numpy as _np

from .. import _core
from . import _logs

_NPC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(_np.__file__))
_COMPILER_DIR = os.path.dirname(os.path.abspath(__file__))

# Note [aligned cuts] in src/tracer/trace_segments.cpp: frames of these directories are not the user's.
_core._set_position_dirs([_NPC_DIR + os.sep, _NUMPY_DIR + os.sep])


_internal_files = {}


def _internal_file(fname):
    """True for files of npc and NumPy (including Cython sources named relatively)."""
    r = _internal_files.get(fname)
    if r is None:
        # Asked for every traced element read: remembered per file name (few distinct names).
        r = (fname.startswith(_NPC_DIR) or fname.startswith(_NUMPY_DIR) or fname.startswith("numpy/")
             or fname.endswith(".pyx"))
        if len(_internal_files) < 4096:
            _internal_files[fname] = r
    return r


def _is_npc(x):
    return isinstance(x, _core.ndarray)


# ---------------------------------------------------------------- statistics
_STAT_KEYS = ("traces", "traces_loaded", "cache_hits", "recompiles", "graph_breaks", "eager_runs", "frozen_misses",
              "kernels_compiled", "kernels_run", "graphs_run", "compile_timeouts",
              "segment_cuts", "segments_reused")
_stats = dict.fromkeys(_STAT_KEYS, 0)
# Note [compiles and traces]: traces with a guard key seen for the first time, by all compiled
# functions together (what config.accumulated_recompile_limit bounds). A function with graph
# breaks traces on every call, but a call whose key an earlier trace had reuses that trace's
# segments (looked up by structure): it is no compile, and counts towards no limit.
_compiles = [0]
_times = {}  # function name -> list of dicts of seconds
_all_compiled = weakref.WeakSet()  # the live compiled functions, for reset()
class _TLS(threading.local):
    # Class-level defaults: a missing attribute on a threading.local costs an exception.
    disabled = False
    frozen = False
    ctx = None
    last_break = None
    side_effects = ()
    patches = None  # the _Patches of this thread's trace
    attr_reads = None  # the _AttrReads of this thread's trace (Note [attribute reads] in _guards.py)


_tls = _TLS()
_epoch = [0]


_fusion_base = {}


def _fusion_counters():
    fs = getattr(_core, "_fusion_stats", None)
    return fs() if fs is not None else {}


def stats():
    """Counters since the last reset(): traces, traces_loaded (first traces loaded from
    ``npc.config.trace_cache``'s directory instead of traced: Note [persisted traces] in
    _persist.py), cache_hits, recompiles, graph_breaks,
    eager_runs (calls run eagerly: recompile limit hit), frozen_misses (npc.compiler.run
    misses), graphs_run (replays), kernels_compiled, kernels_run and compile_timeouts (C++
    compiles stopped at ``npc.config.compile_timeout``; from the fused backend)."""
    r = dict(_stats)
    f = _fusion_counters()
    if f:
        # kernels_compiled: distinct kernels (loop nests of distinct text) the fused backend
        # lowered, whether the C++ compiler ran or a cache had them (Note [kernels across
        # graphs] in src/fusion/backend.cpp): it grows with the number of distinct kernels, not
        # with the graphs or segments that hold them; kernels_run: generated kernels executed.
        # A reset of the backend's own counters (npc._fusion.reset_stats) restarts from zero.
        for key, src in (("kernels_compiled", "distinct_kernels"),
                         ("kernels_run", "kernel_runs"), ("compile_timeouts", "compile_timeouts")):
            now, base = f.get(src, 0), _fusion_base.get(src, 0)
            if now < base:
                _fusion_base.clear()
                base = 0
            r[key] = now - base
    return r


def reset():
    """Clears every compiled function's cache, the counters and the compile-time table."""
    for ref in list(_all_compiled):
        ref._clear()
    _core._clear_segment_cache()
    for k in _stats:
        _stats[k] = 0
    _compiles[0] = 0
    _times.clear()
    _fusion_base.clear()
    _fusion_base.update(_fusion_counters())


def compile_times(repr="str", aggregate=False):
    """Per-function table of seconds spent tracing, in passes and execution of the first run,
    and in backend compilation. ``repr="csv"`` gives CSV; ``aggregate=True`` sums the runs
    (otherwise each compile is listed)."""
    cols = ("trace", "passes_and_run", "backend_compile", "cxx_compile")
    rows = []
    for name, runs in _times.items():
        if aggregate:
            rows.append((name, *[sum(r[c] for r in runs) for c in cols], len(runs)))
        else:
            rows.extend((name, *[r[c] for c in cols], 1) for r in runs)
    if repr == "csv":
        lines = ["function," + ",".join(cols) + ",compiles"]
        lines += [f"{r[0]}," + ",".join(f"{x:.6f}" for x in r[1:5]) + f",{r[5]}" for r in rows]
        return "\n".join(lines)
    if repr != "str":
        raise ValueError("repr must be 'str' or 'csv'")
    head = (f"{'function':<40} {'trace (s)':>10} {'passes+run (s)':>15} {'backend (s)':>12} "
            f"{'c++ (s)':>9} {'compiles':>8}")
    body = [f"{r[0]:<40} {r[1]:>10.4f} {r[2]:>15.4f} {r[3]:>12.4f} {r[4]:>9.4f} {r[5]:>8}" for r in rows]
    return "\n".join([head] + body)


@atexit.register
def _print_times_at_exit():
    if _logs.enabled("compile_times") and _times:
        print(compile_times(aggregate=True), file=sys.stderr)


# ---------------------------------------------------------------- backends
_backends = {}


def register_backend(name, compile_graph=None):
    """Registers a Python backend: ``compile_graph(graph) -> callable(inputs, scalars)``.

    The fused backend registers itself in C++ (npc::ir::register_backend); a Python backend
    of the same name takes precedence. Usable as a decorator."""
    def deco(fn):
        _backends[name] = fn
        return fn
    return deco if compile_graph is None else deco(compile_graph)


def _available(backend):
    return backend == "eager" or backend in _backends or backend in _core._backends()


# ---------------------------------------------------------------- marks and modes
_marked_dynamic = {}


def mark_dynamic(x, dim):
    """Marks axis `dim` (an int or a list) of array `x` as symbolic for npc.compile: calls
    with other sizes of that axis reuse the same graph (torch._dynamo.mark_dynamic)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    nd = _np.ndim(x)
    for d in dims:
        if not -nd <= d < nd:
            raise IndexError(f"mark_dynamic: dim {d} out of range for an array of {nd} dims")
    _marked_dynamic[id(x)] = (x, {d % nd for d in dims})
    return x


@contextlib.contextmanager
def _thread_flag(name):
    """Sets this thread's flag `name` (compiling disabled, frozen mode) for the block."""
    prev = getattr(_tls, name)
    setattr(_tls, name, True)
    try:
        yield
    finally:
        setattr(_tls, name, prev)
