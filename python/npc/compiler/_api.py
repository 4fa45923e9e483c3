"""npc.compile: capture a function's array program as a graph, cache it by guards, replay it.

How it works (see docs/compile.md): calling a compiled function computes a guard key from
its arguments (types, dtypes, shapes, contiguity, static Python values) and from the Python
numbers and arrays it reads from globals and closure cells. A hit replays the cached graph
without running Python. A miss calls the function with traced arrays: every npc op records
a node of the graph IR (src/tracer); anything that needs a concrete value is a graph break,
after which functions re-run their Python on every call.
"""
import atexit
import contextlib
import functools
import os
import struct
import sys
import threading
import time
import types
import warnings
import weakref

import numpy as _np
import numpy.random  # noqa: F401  (imported before any patching of numpy functions)

from .. import _core
from . import _logs
from . import _repro

__all__ = ["compile", "jit", "explain", "reset", "stats", "compile_times", "run", "disable",
           "disallow_in_graph", "graph_break", "mark_dynamic", "register_backend", "GraphBreakError",
           "config"]

_NPC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(_np.__file__))
_COMPILER_DIR = os.path.dirname(os.path.abspath(__file__))


class GraphBreakError(RuntimeError):
    """Raised by a ``fullgraph=True`` compiled function at its first graph break; the message
    names the reason and the user's file and line."""


from .._config import config  # noqa: E402

config.register("recompile_limit", 8,
                "traces per compiled function before it warns and runs eagerly")
config.register("accumulated_recompile_limit", 256,
                "traces of all compiled functions before new misses run eagerly")
config.register("fail_on_recompile_limit_hit", False,
                "raise instead of warning and running eagerly when a recompile limit is hit")
config.register("eager_if_faster", os.environ.get("NPC_EAGER_IF_FASTER", "1") != "0",
                "run a function with graph breaks eagerly when its traced calls are measured slower "
                "than an eager call (Note [slow graph breaks])")

# Note [slow graph breaks]
# A function with graph breaks runs its Python on every call: each call traces again, looks
# each segment up and runs it. When the segments are small (a boolean mask per loop
# iteration, a scalar read per step) that costs more than the operations themselves, and the
# compiled function would be slower than the same code run eagerly. So, per guard key, the
# first two calls after the compiling one are timed; when they take at least
# _SLOW_BREAK_MIN_S, two calls run eagerly and are timed too, and if the faster eager call took
# less than _SLOW_BREAK_RATIO of the faster traced call, later calls with that key run eagerly
# (counted in eager_runs, logged under `fallback`). Results are the same either way: eager
# npc is NumPy's semantics, which compiled code reproduces. `config.eager_if_faster = False`
# (or NPC_EAGER_IF_FASTER=0, which the test suite sets so that counts of traces do not depend
# on the machine's speed) keeps every call traced; npc.compiler.reset() forgets the measurements.
# Whole graphs (functions without breaks) follow the same rule with their replays
# (_timed_replay): a traced Python loop of thousands of tiny kernel launches can cost more than
# the eager operations it stands for.
config.register("segment_nodes", int(os.environ.get("NPC_SEGMENT_NODES", "10000")),
                "nodes of a traced graph after which it is cut into a new segment (Note [loops] in "
                "src/tracer/trace.cpp); 0: never")

# Note [aligned cuts] in src/tracer/trace.cpp: frames of these directories are not the user's.
_core._set_position_dirs([_NPC_DIR + os.sep, _NUMPY_DIR + os.sep])

_SLOW_BREAK_MIN_S = 2e-3
_SLOW_BREAK_RATIO = 0.8


# ---------------------------------------------------------------- statistics
_STAT_KEYS = ("traces", "cache_hits", "recompiles", "graph_breaks", "eager_runs", "frozen_misses",
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


_tls = _TLS()
_epoch = [0]


_fusion_base = {}


def _fusion_counters():
    fs = getattr(_core, "_fusion_stats", None)
    return fs() if fs is not None else {}


def stats():
    """Counters since the last reset(): traces, cache_hits, recompiles, graph_breaks,
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
_disallowed = set()
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


def graph_break():
    """Inside a compiled function: ends the current graph here (no-op outside tracing)."""
    if _core._is_tracing():
        _core._current_graph_break("npc.compiler.graph_break()")


def _realize_tree(obj):
    if isinstance(obj, _core.ndarray):
        if _core._is_traced(obj):
            _core._realize(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _realize_tree(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            _realize_tree(o)


def _run_outside(fn, reason, args, kwargs):
    """A graph break: run the pending graph, make the arguments concrete, call fn untraced."""
    _core._current_graph_break(reason)
    _realize_tree(args)
    _realize_tree(kwargs)
    ctx = _tls.ctx
    patches = _tls.patches
    _core._deactivate_trace()
    _tls.ctx = None
    _tls.patches = None  # fn runs untraced: its NumPy calls are the real ones
    try:
        return fn(*args, **kwargs)
    finally:
        _tls.patches = patches
        if ctx is not None:
            _tls.ctx = ctx
            ctx.activate()


def disallow_in_graph(fn):
    """Marks `fn` so that a compiled function calling it breaks the graph there and calls it
    eagerly with concrete arrays. Returns a wrapper (use it, or decorate)."""
    name = getattr(fn, "__qualname__", repr(fn))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _core._is_tracing():
            return _run_outside(fn, f"call to {name}, disallowed in graph", args, kwargs)
        return fn(*args, **kwargs)
    _disallowed.add(wrapper)
    return wrapper


def disable(fn=None, recursive=True):
    """Runs `fn` without compilation: inside a compiled function it is a graph break and fn
    runs eagerly. With recursive=False, compiled functions that fn calls still compile. On a
    compiled function, returns the original function."""
    if fn is None:
        return lambda f: disable(f, recursive)
    if isinstance(fn, CompiledFunction):
        return fn._fn
    name = getattr(fn, "__qualname__", repr(fn))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _core._is_tracing():
            return _run_outside(fn, f"call to {name}, wrapped in npc.compiler.disable", args, kwargs)
        if recursive:
            with _thread_flag("disabled"):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper


def run(fn):
    """Frozen mode (torch._dynamo.run): calls compiled function `fn` reusing its cached graphs
    and never compiling new ones; a miss runs the function eagerly."""
    if not isinstance(fn, CompiledFunction):
        raise TypeError("npc.compiler.run expects a function made by npc.compile")

    @functools.wraps(fn._fn)
    def frozen(*args, **kwargs):
        with _thread_flag("frozen"):
            return fn(*args, **kwargs)
    return frozen


@contextlib.contextmanager
def _thread_flag(name):
    """Sets this thread's flag `name` (compiling disabled, frozen mode) for the block."""
    prev = getattr(_tls, name)
    setattr(_tls, name, True)
    try:
        yield
    finally:
        setattr(_tls, name, prev)


# ---------------------------------------------------------------- runtime scalars
# Note [runtime scalars] in src/tracer/trace.cpp: a float argument is traced as a marked NaN.
def _sentinel(k):
    return struct.unpack("<d", struct.pack("<Q", 0x7FF8_5A5A_0000_0000 | (k & 0xFFFFFFFF)))[0]


class _StaticUse(Exception):
    pass


# Exceptions after which the operations recorded so far are not run (an error of a segment
# run itself, a retrace): see the exception handling of _trace_once.
_NO_FLUSH = (FloatingPointError, Warning, _StaticUse, _core._StaticScalar, _core._GraphBreak)


def _static_use(*_a, **_k):
    raise _StaticUse()


class _RuntimeFloat(float):
    """A float argument while tracing: any use as a Python value restarts tracing with the
    argument static; use with arrays records a runtime scalar."""
    __slots__ = ()


def _arith(name):
    def op(self, other=None, *rest):
        if isinstance(other, (_core.ndarray, _np.ndarray)):
            return NotImplemented
        raise _StaticUse()
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
              "__rpow__", "__divmod__", "__rdivmod__", "__lt__", "__le__", "__gt__", "__ge__",
              "__eq__", "__ne__"):
    setattr(_RuntimeFloat, _name, _arith(_name))
for _name in ("__bool__", "__int__", "__neg__", "__pos__", "__abs__", "__round__",
              "__trunc__", "__floor__", "__ceil__", "__hash__", "__repr__", "__str__", "__format__",
              "is_integer", "as_integer_ratio", "hex", "conjugate", "__getnewargs__", "__reduce__",
              "__reduce_ex__", "__complex__", "__float__"):
    # __float__: NumPy converts a float subclass through it (numpy.cos(s), numpy.float64(s),
    # asarray, setitem, fill): such uses need the value, so the argument becomes static; npc's
    # ufunc operands take the object itself (Note [runtime scalars]).
    setattr(_RuntimeFloat, _name, _static_use)
for _name in ("real", "imag"):
    # numpy.real(s)/numpy.imag(s) of a Python float read these (the float's own value).
    setattr(_RuntimeFloat, _name, property(_static_use))
_core._set_runtime_float_type(_RuntimeFloat)


# ---------------------------------------------------------------- captured NumPy calls
class _Patches:
    """While tracing, array-free NumPy/npc creation and random calls made by user code record
    graph nodes (Fill) or host calls (re-run on each replay), so nothing is frozen.

    The module attributes are patched once for all threads that trace at the same time (a
    count under a lock: threads entering and leaving in any order restore the originals when
    the last one leaves); a patched function acts for the calling thread's own trace
    (``_tls.patches``) and calls the original on every other thread."""

    _lock = threading.Lock()
    _users = 0
    _saved = []
    _made = {}  # (module or type, name) -> (original, patched): made once, not per trace

    def __init__(self, ctx, fn_name):
        self.ctx = ctx
        self._prev = None

    @staticmethod
    def _current(depth=2):
        # The calling thread's patches, for calls made by the traced function itself.
        p = _tls.patches
        if p is None or _internal_file(sys._getframe(depth).f_code.co_filename):
            return None
        return p

    @staticmethod
    def _npc_caller(depth=2):
        # npc's own functions (nanmean's divide under errstate(invalid="ignore")) change the
        # error state around operations too: their segments must run under it as well.
        if _tls.patches is None:
            return False
        fname = sys._getframe(depth).f_code.co_filename
        return fname.startswith(_NPC_DIR) and not fname.startswith(_COMPILER_DIR)

    @staticmethod
    def _patch(mod, name, make):
        orig = getattr(mod, name, None)
        if orig is None:
            return
        _Patches._saved.append((mod, name, orig))
        made = _Patches._made.get((mod, name))
        if made is None or made[0] is not orig:
            made = _Patches._made[(mod, name)] = (orig, make(orig))
        setattr(mod, name, made[1])

    @staticmethod
    def _fill_maker(value_of):
        def make(orig):
            @functools.wraps(orig)
            def patched(*args, **kwargs):
                p = _Patches._current()
                if p is None:
                    return orig(*args, **kwargs)
                try:
                    shape, value, dtype = value_of(*args, **kwargs)
                    code = _code(dtype)
                except _Unsupported:
                    code = None
                if code is None:
                    return orig(*args, **kwargs)
                sidx = -1
                if isinstance(value, _RuntimeFloat):
                    sidx = _sentinel_index(value)
                    value = 0.0
                r = p.ctx.fill(shape, value, code, sidx)
                from .._creation import fill_complex_warning
                fill_complex_warning(value, code, 2)
                return r
            return patched
        return make

    @staticmethod
    def _fill_like_maker(args_of):
        # zeros_like/ones_like/empty_like/full_like of a traced array: a Fill node with the
        # prototype's (possibly symbolic) shape; eager code would allocate a concrete array of
        # the sizes seen while tracing, which the graph would return on every replay.
        def make(orig):
            @functools.wraps(orig)
            def patched(*args, **kwargs):
                p = _Patches._current()
                if p is not None:
                    try:
                        proto, value, dtype, rest = args_of(*args, **kwargs)
                    except TypeError:
                        proto = None
                    if _is_npc(proto) and _core._is_traced(proto) and rest.get("shape") is None and \
                            rest.get("order", "K") in ("K", "A", "C") and rest.get("subok", True) is True and \
                            set(rest) <= {"order", "subok", "shape", "device"} and \
                            rest.get("device") in (None, "cpu") and \
                            isinstance(value, (bool, int, float, complex, _np.generic)):
                        code = proto._code if dtype is None else _code(dtype)
                        if code is not None:
                            if isinstance(value, int) and not isinstance(value, bool):
                                from .._array import _check_python_int
                                _check_python_int(value, _np.dtype(dtype) if dtype is not None else proto.dtype)
                            sidx = -1
                            if isinstance(value, _RuntimeFloat):
                                sidx = _sentinel_index(value)
                                value = 0.0
                            r = p.ctx.fill_like(proto, value, code, sidx)
                            from .._creation import fill_complex_warning
                            fill_complex_warning(value, code, 2)
                            return r
                return orig(*args, **kwargs)
            return patched
        return make

    @staticmethod
    def _host_maker(label, state_of):
        def make(orig):
            @functools.wraps(orig)
            def patched(*args, **kwargs):
                p = _Patches._current()
                if p is None:
                    return orig(*args, **kwargs)
                return _host_call(p.ctx, lambda: orig(*args, **kwargs), f"{label}.{orig.__name__}", state_of())
            return patched
        return make

    @staticmethod
    def _layout_maker(orig):
        # numpy.ascontiguousarray/asfortranarray do not dispatch through __array_function__:
        # given a traced array, NumPy would realize it (a graph break) into a copy, where its
        # result is a view of the array when the array already has the layout (later writes
        # into one show in the other). npc's own function keeps it traced, and a view.
        import npc
        mine = getattr(npc, orig.__name__)

        @functools.wraps(orig)
        def patched(*args, **kwargs):
            a = args[0] if args else kwargs.get("a")
            if kwargs.get("like") is None and _is_npc(a) and _core._is_traced(a) and \
                    _Patches._current() is not None:
                kwargs.pop("like", None)
                return mine(*args, **kwargs)
            return orig(*args, **kwargs)
        return patched

    @staticmethod
    def _rng_maker(orig):
        @functools.wraps(orig)
        def patched(*a, **k):
            p = _Patches._current()
            return _GenProxy(p.ctx, lambda: orig(*a, **k), fresh=True) if p is not None else orig(*a, **k)
        return patched

    @staticmethod
    def _install():
        import npc
        P = _Patches
        for mod in (_np, npc):
            P._patch(mod, "zeros", P._fill_maker(lambda shape, dtype=float, order="C", **k: (shape, 0, dtype)))
            P._patch(mod, "ones", P._fill_maker(lambda shape, dtype=None, order="C", **k: (shape, 1, dtype)))
            P._patch(mod, "empty", P._fill_maker(lambda shape, dtype=float, order="C", **k: (shape, 0, dtype)))
            P._patch(mod, "full", P._fill_maker(_full_args))
            P._patch(mod, "zeros_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 0, dtype, k)))
            P._patch(mod, "ones_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 1, dtype, k)))
            P._patch(mod, "empty_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 0, dtype, k)))
            P._patch(mod, "full_like", P._fill_like_maker(
                lambda a, fill_value, dtype=None, **k: (a, fill_value, dtype, k)))
        for name in ("ascontiguousarray", "asfortranarray"):
            P._patch(_np, name, P._layout_maker)
        for mod in (_np, npc):
            for name in ("arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri"):
                P._patch(mod, name, P._host_maker(mod.__name__, lambda: None))
        glob = lambda: _GlobalState()  # noqa: E731
        for name in ("rand", "randn", "random", "random_sample", "uniform", "normal", "randint",
                     "standard_normal", "exponential", "poisson", "binomial", "permutation", "choice",
                     "beta", "gamma"):
            P._patch(_np.random, name, P._host_maker("numpy.random", glob))
        P._patch(_np.random, "default_rng", P._rng_maker)
        P._patch(_np.random, "seed", lambda orig: functools.wraps(orig)(
            lambda *a, **k: _run_outside(orig, "numpy.random.seed (global state)", a, k)
            if _Patches._current() is not None else orig(*a, **k)))
        # Note [errstate inside compiled functions]: numpy.errstate (npc's is NumPy's) entered
        # or left, and seterr, by the traced function break the graph there, so every
        # segment runs under the error state in effect around its operations.
        P._patch(_np.errstate, "__enter__", P._errstate_enter_maker)
        P._patch(_np.errstate, "__exit__", P._errstate_exit_maker)
        for mod in (_np, npc):
            P._patch(mod, "seterr", P._seterr_maker)
        import builtins
        P._patch(builtins, "print", P._print_maker)
        for name in _SCALAR_METHODS:
            P._patch(_core.ndarray, name, _scalar_method_maker)
        P._patch(_core.ndarray, "__getitem__", _masked_getitem_maker)
        P._patch(_core.ndarray, "__setitem__", _masked_setitem_maker)

    def __enter__(self):
        with _Patches._lock:
            if _Patches._users == 0:
                try:
                    _Patches._install()
                except BaseException:
                    _Patches._restore()
                    raise
            _Patches._users += 1
        self._prev = _tls.patches
        _tls.patches = self
        return self

    @staticmethod
    def _errstate_enter_maker(orig):
        @functools.wraps(orig)
        def __enter__(self):
            if _Patches._current() is not None or _Patches._npc_caller():
                _core._current_graph_break("numpy.errstate entered")
            return orig(self)
        return __enter__

    @staticmethod
    def _errstate_exit_maker(orig):
        @functools.wraps(orig)
        def __exit__(self, *exc_info):
            if _Patches._current() is None and not _Patches._npc_caller():
                return orig(self, *exc_info)
            if exc_info and exc_info[0] is not None:
                if issubclass(exc_info[0], _NO_FLUSH):
                    return orig(self, *exc_info)
                # An exception leaves the block: what it recorded ran under its state in NumPy.
                try:
                    try:
                        _core._current_graph_break("numpy.errstate left")
                    except (_core._StaticScalar, _core._GraphBreak):
                        pass
                finally:
                    orig(self, *exc_info)
                return None
            try:
                _core._current_graph_break("numpy.errstate left")
            finally:
                orig(self, *exc_info)
        return __exit__

    @staticmethod
    def _seterr_maker(orig):
        @functools.wraps(orig)
        def seterr(*args, **kwargs):
            if _Patches._current() is not None:
                _core._current_graph_break("numpy.seterr")
            return orig(*args, **kwargs)
        return seterr

    @staticmethod
    def _print_maker(orig):
        @functools.wraps(orig)
        def patched(*args, **kwargs):
            if _Patches._current() is not None and not any(isinstance(a, (_core.ndarray, _np.ndarray)) for a in args):
                f = sys._getframe(1)
                _tls.side_effects.append(f"print() of non-array values at {f.f_code.co_filename}:{f.f_lineno} "
                                         "runs while tracing only")
            return orig(*args, **kwargs)
        return patched

    @staticmethod
    def _restore():
        for mod, name, orig in reversed(_Patches._saved):
            setattr(mod, name, orig)
        _Patches._saved.clear()

    def __exit__(self, *exc):
        _tls.patches = self._prev
        with _Patches._lock:
            _Patches._users -= 1
            if _Patches._users == 0:
                _Patches._restore()


# Note [scalar results] in src/tracer/trace.hpp: a method of a NumPy scalar returns a scalar
# where the ndarray method returns a 0-d array (NumPy runs the method on a 0-d array and
# unwraps the result). While tracing, such a method of a traced 0-d value that eager code
# would have returned as a scalar marks its 0-d result as one too.
_SCALAR_METHODS = ("astype", "copy", "reshape", "round", "conj", "conjugate", "clip", "squeeze",
                   "transpose", "view", "byteswap", "flatten", "ravel", "__abs__", "__neg__",
                   "__pos__", "__invert__")


def _scalar_method_maker(orig):
    @functools.wraps(orig)
    def method(self, *args, **kwargs):
        r = orig(self, *args, **kwargs)
        if isinstance(r, _core.ndarray) and r.ndim == 0 and _core._scalar_result(self):
            _core._mark_scalar(r)
        return r
    return method


# Note [masked read-modify-write]
# `a[mask] += v` is `t = a[mask]; t += v; a[mask] = t`: the middle value has a data-dependent
# shape, but the statement as a whole does not. While tracing, a boolean-mask __getitem__
# whose caller is exactly that statement (the bytecode `COPY 2; COPY 2; BINARY_SUBSCR` that
# only augmented subscript assignment emits) returns a _MaskedRMW; its in-place operator
# with a value whose broadcast does not depend on the number of selected elements computes
# `op(where(mask, a, 1), where(mask, v, 1))` over all of `a` with the in-place casting rules,
# and the store writes where(mask, result, a). Unselected elements compute `op(1, 1)`, which
# raises no floating-point error for any of these ops and dtypes, so warnings and errors come
# from the selected elements only, as eagerly. A Python scalar `v` stays weak (NEP 50):
# where(mask, v, 1 of a's dtype) has the dtype `v` takes against `a`. Any other value falls
# back to eager semantics (the mask read is then a graph break).
_RMW_OPS = {row.dunders[2]: row.name for row in _core.op_table() if len(row.dunders) == 3}  # "__iadd__": "add"
_rmw_sites = {}


def _is_augmented_subscript(frame):
    code = frame.f_code
    sites = _rmw_sites.get(code)
    if sites is None:
        import dis
        ins = list(dis.get_instructions(code))
        sites = set()
        for k in range(2, len(ins) - 1):
            if ins[k].opname == "BINARY_SUBSCR" and all(
                    ins[k - j].opname == "COPY" and ins[k - j].arg == 2 for j in (1, 2)):
                # f_lasti may point into the instruction's inline cache once it is specialised.
                sites.update(range(ins[k].offset, ins[k + 1].offset))
        _rmw_sites[code] = sites
    return frame.f_lasti in sites


def _bool_mask(key):
    if isinstance(key, (_core.ndarray, _np.ndarray)) and key.dtype == _np.bool_ and key.ndim >= 1:
        return key
    return None


def _masked_getitem_maker(orig):
    def getitem(self, key):
        m = _bool_mask(key)
        if m is not None and _tls.patches is not None and \
                m.ndim <= self.ndim and tuple(m.shape) == tuple(self.shape[:m.ndim]) and \
                (_core._is_traced(self) or (_is_npc(m) and _core._is_traced(m))) and \
                _is_augmented_subscript(sys._getframe(1)):
            return _MaskedRMW(self, m, orig)
        if _tls.patches is not None and _scalar_key(key, self.ndim) and _core._is_traced(self) and \
                not _internal_file(sys._getframe(1).f_code.co_filename):
            # Note [traced scalar elements]
            return _ScalarRMW(orig(self, key)) if _is_augmented_subscript(sys._getframe(1)) else orig(self, key).copy()
        return orig(self, key)
    return getitem


# Note [traced scalar elements]
# An element read with integers only (`a[0]`, `a[1, 2]`) is a NumPy scalar eagerly: a value
# of its own, and its in-place operators make new objects (`a[0] /= 2` on an int array
# divides a float64 scalar and stores it back through setitem's cast). While tracing the
# element is a 0-d array: a copy, so later writes into it never reach `a`, and inside an
# augmented subscript assignment a _ScalarRMW whose in-place operators compute out of place.
def _scalar_key(key, ndim):
    keys = key if type(key) is tuple else (key,)
    if len(keys) != ndim:
        return False
    for k in keys:
        if isinstance(k, (bool, _np.bool_)) or not isinstance(k, (int, _np.integer)):
            return False
    return True


class _ScalarRMW:
    """`a[i]` inside `a[i] op= v` while tracing (Note [traced scalar elements])."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _scalar_rmw_method(name):
    import operator
    op = getattr(operator, "__" + name[3:])  # __itruediv__ -> operator.__truediv__

    def method(self, v):
        return op(self.value, v)
    method.__name__ = name
    return method


for _name in _RMW_OPS:
    setattr(_ScalarRMW, _name, _scalar_rmw_method(_name))
setattr(_ScalarRMW, "__imatmul__", _scalar_rmw_method("__imatmul__"))


def _masked_setitem_maker(orig):
    def setitem(self, key, value):
        if type(value) is _MaskedResult and value.base is self and value.mask is key:
            import npc
            m = value.mask
            mb = npc.reshape(m, tuple(m.shape) + (1,) * (self.ndim - m.ndim))
            return orig(self, Ellipsis, npc.where(mb, value.full, self))
        return orig(self, key, value)
    return setitem


class _MaskedResult:
    __slots__ = ("base", "mask", "full")

    def __init__(self, base, mask, full):
        self.base, self.mask, self.full = base, mask, full


class _MaskedRMW:
    """`a[mask]` inside `a[mask] op= v` while tracing (Note [masked read-modify-write])."""
    __slots__ = ("base", "mask", "getitem")

    def __init__(self, base, mask, getitem):
        self.base, self.mask, self.getitem = base, mask, getitem

    def _independent(self, v):
        vs = list(_np.shape(v))
        while vs and vs[0] == 1:
            vs.pop(0)
        rest = tuple(self.base.shape[self.mask.ndim:])
        if len(vs) > len(rest) or (not rest and vs):
            return False
        return all(a == 1 or a == b for a, b in zip(reversed(vs), reversed(rest)))


def _rmw_method(name, ufunc_name):
    import operator
    inplace = getattr(operator, name.strip("_"))  # operator.iadd, ...

    def method(self, v):
        import npc
        if isinstance(v, (_MaskedRMW, _MaskedResult)) or not self._independent(v):
            tmp = self.getitem(self.base, self.mask)
            return inplace(tmp, v)
        m = self.mask
        mb = npc.reshape(m, tuple(m.shape) + (1,) * (self.base.ndim - m.ndim))
        one = npc.asarray(1, dtype=self.base.dtype)
        full = npc.where(mb, self.base, one)
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            v = npc.where(mb, v, npc.asarray(1, dtype=v.dtype))
        else:
            v = npc.where(mb, v, one)
        getattr(npc, ufunc_name)(full, v, out=full)
        return _MaskedResult(self.base, m, full)
    method.__name__ = name
    return method


for _name, _uf in _RMW_OPS.items():
    setattr(_MaskedRMW, _name, _rmw_method(_name, _uf))


def _internal_file(fname):
    """True for files of npc and NumPy (including Cython sources named relatively)."""
    return (fname.startswith(_NPC_DIR) or fname.startswith(_NUMPY_DIR) or fname.startswith("numpy/")
            or fname.endswith(".pyx"))


class _Unsupported(Exception):
    pass


def _full_args(shape, fill_value, dtype=None, order="C", **k):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _np.bool_
        elif isinstance(fill_value, int):
            dtype = _np.int64
        elif isinstance(fill_value, float):
            dtype = _np.float64
        elif isinstance(fill_value, complex):
            dtype = _np.complex128
        elif isinstance(fill_value, _np.generic):
            dtype = fill_value.dtype
        else:
            raise _Unsupported()
    if not isinstance(fill_value, (bool, int, float, complex, _np.generic)):
        raise _Unsupported()
    return shape, fill_value, dtype


def _code(dtype):
    from .._dtypes import code_of
    try:
        return code_of(_np.dtype(dtype if dtype is not None else float))
    except TypeError:
        return None


def _marked(arrays):
    """True when a concrete float64/complex128 array holds a runtime scalar's marker NaN
    (it was computed eagerly from a float argument while tracing)."""
    for a in arrays:
        if _is_npc(a) and _core._is_traced(a):
            continue
        a = _np.asarray(a)
        if a.dtype not in (_np.float64, _np.complex128) or a.size > (1 << 20):
            continue
        bits = _np.ascontiguousarray(a).view(_np.uint64)
        tag = (bits >> 32) & 0xFFFF
        if _np.any((((bits >> 51) & 0xFFF) == 0xFFF) & ((tag == 0x5A5A) | (tag == 0xA5A5))):
            return True
    return False


def _sentinel_index(v):
    return struct.unpack("<Q", struct.pack("<d", float.__float__(v)))[0] & 0xFFFFFFFF


class _GlobalState:
    """Save/restore of numpy.random's global state around a trace-time draw."""

    def save(self):
        return _np.random.get_state()

    def restore(self, st):
        _np.random.set_state(st)


class _GenState:
    def __init__(self, gen):
        self.gen = gen

    def save(self):
        return self.gen.bit_generator.state

    def restore(self, st):
        self.gen.bit_generator.state = st


def _host_call(ctx, thunk, name, state):
    """Records `thunk` (an array-free NumPy call) as a host call of the graph: it runs on every
    replay. The trace-time example is drawn with the random state restored afterwards, so the
    stream advances once per call, as in eager code."""
    st = state.save() if state is not None else None
    try:
        example = thunk()
    finally:
        if st is not None:
            state.restore(st)
    if _np.ndim(example) == 0 and not isinstance(example, (_np.ndarray, _core.ndarray)):
        # A scalar draw (np.random.rand() with no size): Python value, not captured.
        return _run_outside(lambda: thunk(), f"{name} returning a Python scalar", (), {})
    from .._array import _as_npc

    def call():
        return _as_npc(_np.asarray(thunk()))
    return ctx.host_call(call, name, _as_npc(_np.asarray(example)))


class _GenProxy:
    """A numpy.random.Generator inside a compiled function: each draw is a host call. A
    generator created inside the function (default_rng) is re-created on every call, as the
    eager code does; one passed in is used by reference."""

    _DRAWS = ("random", "normal", "uniform", "integers", "standard_normal", "exponential", "poisson",
              "binomial", "choice", "permutation", "beta", "gamma", "standard_exponential", "lognormal")

    def __init__(self, ctx, factory, fresh):
        self._ctx, self._factory, self._fresh = ctx, factory, fresh
        self._gen = factory() if not fresh else None
        self._epoch = None

    def _current(self):
        if not self._fresh:
            return self._gen
        if self._epoch != _epoch[0] or self._gen is None:
            self._gen = self._factory()
            self._epoch = _epoch[0]
        return self._gen

    def __getattr__(self, name):
        if name not in self._DRAWS:
            return getattr(self._current(), name)

        def draw(*args, **kwargs):
            return _host_call(self._ctx, lambda: getattr(self._current(), name)(*args, **kwargs),
                              f"Generator.{name}", _LazyGenState(self))
        return draw


class _LazyGenState:
    def __init__(self, proxy):
        self.proxy = proxy

    def save(self):
        return self.proxy._current().bit_generator.state

    def restore(self, st):
        self.proxy._current().bit_generator.state = st


# ---------------------------------------------------------------- breaks: reasons + user line
_REASONS = {
    "__bool__": "bool() of a traced array", "__int__": "int() of a traced array",
    "__float__": "float() of a traced array", "__complex__": "complex() of a traced array",
    "__index__": "use of a traced array as an index", "__len__": "len() of a traced array",
    "item": ".item() of a traced array", "_item": ".item() of a traced array",
    "tolist": ".tolist() of a traced array", "_repr": "printing a traced array (repr)",
    "_str": "printing a traced array (str)", "_format": "formatting a traced array",
    "__iter__": "iterating over a traced array", "_array": "conversion of a traced array to numpy",
    "_numpy_view": "conversion of a traced array to numpy",
}


def _opcode_reason(frame):
    """What the user's bytecode was doing with the value (a condition, a call)."""
    import dis
    try:
        for ins in dis.get_instructions(frame.f_code):
            if ins.offset == frame.f_lasti:
                op = ins.opname
                if op.startswith("POP_JUMP") or op in ("TO_BOOL", "UNARY_NOT"):
                    return "bool() of a traced array (a condition)"
                if op.startswith("COMPARE"):
                    return "comparison of a traced value in Python"
                if op.startswith("FORMAT"):
                    return "formatting a traced array"
                if op in ("GET_ITER", "FOR_ITER"):
                    return "iterating over a traced array"
                return None
    except Exception:
        return None
    return None


def _annotate(reason):
    """Adds the user's file:line (the innermost frame outside npc and NumPy) and, when the
    break came from an npc method, what needed the value."""
    f = sys._getframe(1)
    detail = None
    fallback = False
    user = None
    outer = None  # the outermost npc/NumPy frame: the library call the user made
    while f is not None:
        fname = f.f_code.co_filename
        inside = _internal_file(fname)
        if inside:
            outer = f
            name = f.f_code.co_name
            if "fallback" in fname or "fallback" in name or name in ("__array_function__", "__array_ufunc__"):
                # The protocols only need concrete values when they hand the call to NumPy.
                fallback = True
            elif name in _REASONS:
                detail = _REASONS[name]  # the outermost npc frame (closest to the user) wins
        else:
            if fname != "<frozen runpy>":
                user = f
                break
        f = f.f_back
    if fallback:
        detail = "NumPy fallback call"
    if detail is None and outer is not None and outer.f_code.co_filename.startswith(_NPC_DIR) is False:
        mod = outer.f_globals.get("__name__", "numpy")
        detail = f"NumPy fallback call ({mod}.{outer.f_code.co_name})"
    elif detail is None and outer is not None and reason == "a concrete value was needed":
        mod = outer.f_globals.get("__name__", "npc")
        detail = f"{mod}.{outer.f_code.co_name} needs a concrete value"
    if detail is None and user is not None:
        detail = _opcode_reason(user)
    if detail and reason == "a concrete value was needed":
        reason = detail
    where = f" at {user.f_code.co_filename}:{user.f_lineno} in {user.f_code.co_name}" if user else ""
    text = reason + where
    _tls.last_break = text
    _logs.log("graph_breaks", "graph break: %s", text)
    return text


# ---------------------------------------------------------------- guard keys
def _contig(flags_c, flags_f):
    return 2 if flags_c else (1 if flags_f else 0)


def _valid_bytes(x):
    """(bytes before the lowest element, bytes past the highest element) of array `x` that are
    valid memory, for the covering view of a strided argument (Note [strided inputs] in
    src/tracer/trace.cpp): (-1, -1), the bytes of the storage the bound npc array views. That
    storage spans the memory of a NumPy argument's owner (Note [storages of NumPy arrays] in
    python/npc/csrc/bind_interop.cpp), or is the copy of an argument npc cannot view."""
    return (-1, -1)


# Note [arguments that stay NumPy]
# A NumPy array that npc cannot trace faithfully is left to NumPy: a call with such an
# argument runs the function eagerly (counted in eager_runs, logged under `fallback`), and
# such a captured global/closure array is read as the NumPy array it is (its operations are
# NumPy's; those that meet traced arrays break the graph). Two kinds:
# - subclasses of numpy.ndarray (np.matrix, np.ma.MaskedArray, ...): their operators and
#   methods have their own semantics (matrix products, masks) that a traced npc array would
#   silently drop;
# - unaligned arrays (np.frombuffer at an odd offset): npc binds a copy of them, so a write
#   through the traced argument would not reach the caller's memory.
def _numpy_only(x):
    """True for a NumPy array that npc.compile leaves to NumPy (Note [arguments that stay NumPy])."""
    return type(x) is not _np.ndarray or not x.flags.aligned


def _contig_label(c):
    if isinstance(c, tuple):
        return f"strides {c[:-1]}"
    return ['strided', 'F-contiguous', 'C-contiguous'][c]


def _is_npc(x):
    return isinstance(x, _core.ndarray)


class _KeyBuilder:
    """Flattens arguments into a guard key (a hashable tuple), the arrays bound as graph
    inputs, the float arguments (runtime scalars) and, with `labels`, a description."""
    __slots__ = ("key", "arrays", "floats", "labels", "want_labels", "dyn", "static_floats", "numpy_in",
                 "npc_in", "unsupported")

    def __init__(self, dyn, static_floats, want_labels=False):
        self.key = []
        self.arrays = []
        self.floats = []
        self.labels = [] if want_labels else None
        self.dyn = dyn
        self.static_floats = static_floats
        self.numpy_in = False
        self.npc_in = False
        self.unsupported = False

    def add(self, x, path):
        t = type(x)
        if t is float:
            if path in self.static_floats:
                self._part(("f", x), path, f"== {x!r}")
            else:
                self.floats.append(x)
                self._part("F", path, "float (runtime scalar)")
            return
        if isinstance(x, _core.ndarray) or isinstance(x, _np.ndarray):
            self._array(x, path)
            return
        if t is tuple or t is list:
            self._part((t.__name__, len(x)), path, f"{t.__name__} of length {len(x)}")
            for i, v in enumerate(x):
                self.add(v, f"{path}[{i}]")
            return
        if t is dict:
            keys = tuple(x.keys())
            self._part(("dict", keys), path, f"dict with keys {keys}")
            for k, v in x.items():
                self.add(v, f"{path}[{k!r}]")
            return
        if t in (int, bool, str, bytes, type(None), complex) or isinstance(x, _np.generic):
            self._part((t, x), path, f"== {x!r}")
            return
        if isinstance(x, _np.random.Generator):
            self._part(("gen", id(x)), path, "the same numpy Generator")
            return
        try:
            hash(x)
            self._part((t, id(x)), path, f"is the same {t.__name__} object")
        except TypeError:
            self._part((t, id(x)), path, f"is the same {t.__name__} object")

    def _array(self, x, path):
        if _is_npc(x):
            if _core._is_traced(x):
                self.unsupported = True
            fl = x._flags
            c = _contig(fl[0], fl[1])
            code = x._code
            self.npc_in = True
        else:
            from .._dtypes import code_of
            code = code_of(x.dtype) if x.dtype.isnative else None
            if code is None or _numpy_only(x):
                # Note [arguments that stay NumPy]
                self.unsupported = True
                code = -1
            c = _contig(x.flags.c_contiguous, x.flags.f_contiguous)
            self.numpy_in = True
        shape = x.shape
        dyn = self.dyn.get(path)
        if c == 0 and code >= 0:
            # Note [strided inputs] in src/tracer/trace.cpp: traced with its own strides, so
            # the key holds them and the shape stays static.
            xs = x if _is_npc(x) else _from_numpy(x)
            if _core._strided_input(xs):
                c = tuple(x.strides) + (_core._cover_layout(xs, _valid_bytes(x)),)
                dyn = None
        if dyn:
            shape = tuple(-1 if (i in dyn and s >= 2) else s for i, s in enumerate(shape))
        # The same array passed twice is one graph input (aliasing is part of the key).
        alias = -1
        for k, (y, _) in enumerate(self.arrays):
            if y is x:
                alias = k
                break
        # Device and requires_grad (all npc arrays are on "cpu" without gradients today) are
        # part of the key so that device arrays and autodiff get their own entries.
        dev = str(getattr(x, "device", "cpu"))
        rg = bool(getattr(x, "requires_grad", False))
        self.key.append((code, shape, c, alias, dev, rg))
        self.arrays.append((x, path))
        if self.labels is not None:
            self.labels.append((path, f"dtype {x.dtype}, shape {shape}, "
                                      f"{_contig_label(c)}, "
                                      f"device {dev}, requires_grad {rg}"))

    def _part(self, value, path, text):
        self.key.append(value)
        if self.labels is not None:
            self.labels.append((path, text))


def _code_names(code):
    """The global names a code object reads, recursively into nested code objects."""
    names = set(code.co_names)
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            names |= _code_names(k)
    return names


def _free_values(fn):
    """(name, getter) for the globals and closure cells fn's code reads (recursively into
    nested code objects); their numbers and arrays are guarded."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    names = _code_names(code)
    g = getattr(fn, "__globals__", {})
    out = [(f"global {n}", (lambda n=n: g.get(n, _MISSING))) for n in sorted(names)]
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            def get(cell=cell):
                try:
                    return cell.cell_contents
                except ValueError:
                    return _MISSING
            out.append((f"closure {name}", get))
    return out


# Note [captured arrays]
# Arrays the function reads from its globals and closure cells are graph inputs bound by
# reference (guarded by identity, dtype and shape), so changes between calls are seen. While
# tracing, the function runs as a copy of itself (same code) whose globals are a _TraceGlobals
# over its module's dict and whose closure cells holding arrays are new cells: each captured
# array reads as a traced stand-in there, exactly like an array argument, so every read, every
# NumPy call on it and every write into it (`BUF[:] = x`, `out=BUF`) is recorded, writes are
# functionalized and written back into the caller's array, and expressions of captured arrays
# alone are never frozen into constants. Functions of the same module that it calls read their
# globals through the same _TraceGlobals (they are called as copies too), so a global array
# read by a helper is the same stand-in. The module's dict and the original cells are never
# rebound: other threads see the real arrays while a trace runs. Globals the traced code
# assigns are copied into the module's dict when the trace ends.
class _TraceGlobals(dict):
    """The globals of traced copies: a copy of the module's dict taken when the trace starts,
    into which the traced code stores. Reading a name through it (CPython reads globals that
    are not an exact dict through __getitem__) gives the traced stand-in of a module array and
    a traced copy of a module function, until the trace ends (`alive` False). Class bodies,
    which read globals as a dict, see the module's values."""
    __slots__ = ("real", "snapshot", "standins", "copies", "ctx", "by_id", "alive")

    def __getitem__(self, name):
        v = dict.__getitem__(self, name)
        if not self.alive or self.snapshot.get(name, _MISSING) is not v:
            return v  # after the trace, or assigned while tracing
        t = self.standins.get(name)
        if t is not None:
            return t
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            t = _standin(self.ctx, v, self.by_id)
            if t is not None:
                self.standins[name] = t
                return t
        elif type(v) is types.FunctionType and v.__globals__ is self.real:
            c = self.copies.get(name)
            if c is None:
                c = self.copies[name] = _function_copy(v, self, v.__closure__)
            return c
        elif type(v) is CompiledFunction and getattr(v._fn, "__globals__", None) is self.real and \
                type(v._fn) is types.FunctionType:
            # A compiled function called while tracing is inlined: as a copy, like a helper.
            c = self.copies.get(name)
            if c is None:
                c = self.copies[name] = _function_copy(v._fn, self, v._fn.__closure__)
            return c
        return v

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def finish(self):
        """Ends the trace: the globals the traced code assigned or deleted are assigned or
        deleted in the module's dict (a traced value cannot outlive its trace: such an
        assignment keeps the module's value)."""
        self.alive = False
        for name, v in list(dict.items(self)):
            if self.snapshot.get(name, _MISSING) is v:
                continue
            if isinstance(v, _core.ndarray) and _core._is_traced(v):
                continue
            self.real[name] = v
        for name in self.snapshot:
            if not dict.__contains__(self, name) and self.real.get(name, _MISSING) is self.snapshot[name]:
                del self.real[name]
        self.standins.clear()
        self.copies.clear()


def _function_copy(fn, glob, closure):
    copy = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, closure)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    if fn.__dict__:
        copy.__dict__.update(fn.__dict__)
    return copy


def _standin(ctx, v, by_id):
    """The traced stand-in of captured array `v`, or None when it cannot be traced."""
    if _is_npc(v):
        if _core._is_traced(v):
            return None
        npcx = v
    else:
        from .._dtypes import code_of
        if not v.dtype.isnative or code_of(v.dtype) is None or _numpy_only(v):
            return None
        npcx = _from_numpy(v)
    t = by_id.get(id(v))
    if t is None:
        t = by_id[id(v)] = ctx.add_input(npcx, [], True)
    return t


def _traced_copy(fn, ctx, by_id):
    """(function to trace, its _TraceGlobals or None): a copy of `fn` reading traced stand-ins
    of its captured arrays (Note [captured arrays]); `fn` itself when it is not a function."""
    code = getattr(fn, "__code__", None)
    if code is None or not isinstance(fn, types.FunctionType):
        return fn, None
    g = fn.__globals__
    # The names fn's own code reads are bound first (in name order, as the guards list them).
    proxy = _TraceGlobals(g)
    proxy.real, proxy.snapshot, proxy.standins, proxy.copies = g, dict(g), {}, {}
    proxy.ctx, proxy.by_id, proxy.alive = ctx, by_id, True
    for name in sorted(_code_names(code)):
        if isinstance(g.get(name, None), (_core.ndarray, _np.ndarray)):
            proxy.__getitem__(name)  # binds the stand-in now
    closure = fn.__closure__
    if closure:
        cells = []
        for cell in closure:
            try:
                v = cell.cell_contents
            except ValueError:
                v = _MISSING
            t = _standin(ctx, v, by_id) if isinstance(v, (_core.ndarray, _np.ndarray)) else None
            cells.append(cell if t is None else types.CellType(t))
        if any(c is not o for c, o in zip(cells, closure)):
            closure = tuple(cells)
    return _function_copy(fn, proxy, closure), proxy


_MISSING = object()
_GUARDED = (int, float, complex, bool, _np.generic)


def _free_key(free, unguarded=()):
    key = []
    for name, get in free:
        v = get()
        if v is _MISSING or isinstance(v, (types.ModuleType, types.FunctionType, type)):
            continue
        if isinstance(v, _GUARDED):
            key.append((name, type(v), v))
        elif isinstance(v, (_core.ndarray, _np.ndarray)):
            # Captured arrays are graph inputs bound by reference: in-place changes between
            # calls are seen; rebinding the name is a guard failure.
            key.append((name, id(v), getattr(v, "dtype", None), v.shape))
        elif (type(v) is list or type(v) is tuple) and name not in unguarded:
            # A list or tuple (an index `x[IDX]`, sizes, a list of arrays) is read while
            # tracing and frozen into the graph: guarded by its contents, so mutating it
            # between calls traces again. One the function itself changes while tracing (a
            # Python side effect: `calls.append(1)`) is not (CompiledFunction._unguarded).
            key.append((name, type(v), _contents_key(v, 0)))
    return tuple(key)


_CONTENTS_MAX = 256


def _contents_key(v, depth):
    """A hashable snapshot of list/tuple `v`: numbers and strings by value, arrays by
    identity, dtype and shape, nested lists and tuples recursively, other objects by identity.
    Longer than _CONTENTS_MAX elements (or nested too deep): identity and length only."""
    if len(v) > _CONTENTS_MAX or depth > 3:
        return ("id", id(v), len(v))
    out = []
    for x in v:
        t = type(x)
        if t in (int, float, bool, str, complex) or x is None or isinstance(x, _np.generic):
            out.append((t, x))
        elif t is list or t is tuple:
            out.append((t, _contents_key(x, depth + 1)))
        elif isinstance(x, (_core.ndarray, _np.ndarray)):
            out.append(("A", id(x), x.dtype, x.shape))
        else:
            out.append(("id", id(x)))
    return tuple(out)


# ---------------------------------------------------------------- compiled function
# Note [warnings of traced Python]
# Warnings the function's Python raises while it is traced (NumPy's and npc's Python-level
# ones: ComplexWarning of astype, "Mean of empty slice", "Degrees of freedom <= 0", the
# RuntimeWarnings of eager ops on concrete values) are recorded through the caller's filters
# and shown again right after the traced call returns or raises (their order among
# themselves and the segments' floating-point warnings is kept). A graph without breaks
# replays without running the Python, so its entry keeps them and shows them on every
# replay, before the graph's own floating-point warnings, under the filters then in effect.
@contextlib.contextmanager
def _recording_warnings():
    recorded = []
    retrace = False
    try:
        with warnings.catch_warnings(record=True) as rec:
            try:
                yield recorded
            except (_StaticUse, _core._StaticScalar):
                retrace = True  # traced again: its warnings come from that trace
                raise
            finally:
                recorded.extend((w.message, w.category, w.filename, w.lineno) for w in rec)
    finally:
        if not retrace:
            _replay_warnings(recorded, False)


def _replay_warnings(recorded, replay):
    for message, category, filename, lineno in recorded:
        # On replays, once-per-location filters behave as for the same code run eagerly.
        registry = _registry_of(filename) if replay else None
        warnings.warn_explicit(message, category, filename, lineno, registry=registry)


@functools.lru_cache(maxsize=256)
def _registry_of(filename):
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) == filename:
            return mod.__dict__.setdefault("__warningregistry__", {})
    return None


class _Entry:
    __slots__ = ("name", "backend", "graph", "arg_inputs", "transposed", "covered", "captured", "out_tree", "constraints",
                 "numpy_out", "labels",
                 "ninputs", "nscalars", "template", "rebuild", "py_warnings", "timing", "plan")


_NDARRAY = _core.ndarray


def _from_numpy(x):
    from .._array import _from_numpy as f
    globals()["_from_numpy"] = f  # resolved once (npc._array imports after this module loads)
    return f(x)


def _arg_constraints(constraints, arg_inputs, transposed, arrays):
    """The trace's symbol constraints (graph input, axis) as (argument position, axis) of the
    call's arrays: an F-ordered argument is bound transposed (its axes reversed)."""
    pos = {}
    for p, slot in enumerate(arg_inputs):
        pos.setdefault(slot, p)

    def arg(i, ax):
        p = pos[i]
        return p, (arrays[p][0].ndim - 1 - ax if i in transposed else ax)
    out = []
    for ia, xa, ib, xb, size in constraints:
        pa, aa = arg(ia, xa)
        pb, ab = arg(ib, xb) if ib >= 0 else (ib, xb)
        out.append((pa, aa, pb, ab, size))
    return out


def _constraints_hold(constraints, arrays):
    for ia, xa, ib, xb, size in constraints:
        a = arrays[ia].shape[xa]
        if (a != size) if ib < 0 else (a != arrays[ib].shape[xb]):
            return False
    return True


def _make_rebuild(tree, numpy_out):
    """A function from the graph's outputs to the result, specialised for the common shapes
    (one array, a tuple of arrays) so that replays do little Python work."""
    if tree[0] == "A" and not numpy_out:
        if tree[2]:
            return lambda outs: outs[0]._scalar()
        return lambda outs: outs[0]
    if tree[0] is tuple and not numpy_out and all(t[0] == "A" and not t[2] for t in tree[1]):
        idx = [t[1] for t in tree[1]]
        if idx == list(range(len(idx))):
            return tuple
    if numpy_out:
        if tree[0] == "A":
            flag = [tree[2]]
            return lambda outs: _core._numpy_views(outs, flag)[0]
        if tree[0] is tuple and all(t[0] == "A" for t in tree[1]) and \
                [t[1] for t in tree[1]] == list(range(len(tree[1]))):
            flags = [t[2] for t in tree[1]]
            return lambda outs: tuple(_core._numpy_views(outs, flags))
    return lambda outs: _rebuild(tree, outs, numpy_out)


class CompiledFunction:
    """The result of npc.compile(fn): call it like fn."""

    def __init__(self, fn, fullgraph=False, backend="fused", dynamic=None):
        if backend not in ("fused", "eager") and backend not in _backends:
            raise ValueError(f"npc.compile: unknown backend {backend!r} (expected 'fused' or 'eager')")
        if dynamic not in (None, True, False):
            raise TypeError("npc.compile: dynamic must be None, True or False")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._fullgraph = fullgraph
        self._backend = backend
        self._dynamic = dynamic
        self._free = _free_values(fn)
        self._name = getattr(fn, "__qualname__", repr(fn))
        self._clear()
        _all_compiled.add(self)

    def _clear(self):
        self._entries = {}
        self._ncompiles = 0
        self._breaks = False
        self._break_keys = set()  # guard keys traced already (functions with breaks)
        self._break_timing = {}  # key -> [traced call seconds..., "eager"/"traced"] (Note [slow graph breaks])
        self._probes = {}  # id(timing list) -> eager call seconds so far
        self._dyn = {}          # path -> set of symbolic axes
        self._last_shapes = {}  # path -> shape at the last trace
        self._static_floats = set()
        self._unguarded = set()  # names of lists/tuples the function mutates while tracing
        self._last_labels = None
        self.last_breaks = []
        self.last_graphs = []
        self.last_ops_per_graph = []
        self.last_side_effects = []
        self.last_cuts = 0
        self.last_segments_reused = 0

    def __get__(self, obj, objtype=None):
        # Methods: bind like a function.
        return self if obj is None else functools.partial(self.__call__, obj)

    def __repr__(self):
        return f"<npc compiled function {self._name}>"

    # -- the hot path
    def __call__(self, *args, **kwargs):
        if _core._is_tracing() or _tls.disabled:
            # Nested compiled functions are inlined into the outer trace.
            return self._fn(*args, **kwargs)
        _epoch[0] += 1
        free = _free_key(self._free, self._unguarded) if self._free else ()
        if free and self._free_numpy_only():
            # Note [arguments that stay NumPy]: a captured matrix or masked array meets traced
            # arrays in its own operators, which would give npc's semantics, not NumPy's.
            _logs.log("fallback", "%s: a captured array is an ndarray subclass or unaligned; running eagerly",
                      self._name)
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        fast = None
        if not kwargs and not self._dyn and not self._static_floats:
            fast = _core._guard_key(args)
        if fast is not None:
            arrays, floats = fast[1], fast[2]
            ov = self._overlaps(args, len(arrays))
            if ov is None:
                return self._run_aliased(args, kwargs)
            key = (fast[0], free, (), ov)
        else:
            kb = self._key_builder(args, kwargs)
            if kb.unsupported:
                _logs.log("fallback", "%s: an argument cannot be traced (non-native dtype, unaligned or an ndarray "
                          "subclass); running eagerly",
                          self._name)
                _stats["eager_runs"] += 1
                return self._fn(*args, **kwargs)
            arrays, floats = [x for x, _ in kb.arrays], kb.floats
            ov = self._overlaps(arrays, len(arrays))
            if ov is None:
                return self._run_aliased(args, kwargs)
            key = (tuple(kb.key), free, tuple(sorted(kwargs)), ov)
        if not self._breaks:
            cands = self._entries.get(key)
            if cands is not None:
                for e in cands:
                    if e.constraints and not _constraints_hold(e.constraints, arrays):
                        continue
                    _stats["cache_hits"] += 1
                    timing = getattr(e, "timing", None)
                    if timing is None or not config.eager_if_faster:
                        return self._replay(e, arrays, floats)
                    return self._timed_replay(e, timing, args, kwargs, arrays, floats)
        if _tls.frozen and not self._breaks:
            _stats["frozen_misses"] += 1
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        # Note [compiles and traces]: a function with breaks re-traces every call; only calls
        # with a guard key not seen before are compiles, limited like recompiles.
        known = self._breaks and key in self._break_keys
        if known and config.eager_if_faster:
            return self._timed_break_call(args, kwargs, key)
        if not known and self._ncompiles >= config.recompile_limit:
            return self._limit_hit(args, kwargs, "recompile_limit", config.recompile_limit)
        if not known and _compiles[0] >= config.accumulated_recompile_limit:
            return self._limit_hit(args, kwargs, "accumulated_recompile_limit", config.accumulated_recompile_limit)
        return self._trace(args, kwargs, self._key_builder(args, kwargs), key, known)

    def _timed_replay(self, e, timing, args, kwargs, arrays, floats):
        """A replay of entry `e` while its speed against eager calls is being measured (Note
        [slow graph breaks]; the same rule for whole graphs: a traced loop of thousands of
        tiny kernels can cost more than the eager operations it replaces)."""
        if timing and isinstance(timing[-1], str):
            if timing[-1] == "traced":
                e.timing = None  # decided: replays go the plain way from now on
                return self._replay(e, arrays, floats)
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        if len(timing) >= 2 and min(timing) >= _SLOW_BREAK_MIN_S:
            return self._eager_probe(timing, args, kwargs)
        t0 = time.perf_counter()
        result = self._replay(e, arrays, floats)
        timing.append(time.perf_counter() - t0)
        if len(timing) >= 2 and min(timing) < _SLOW_BREAK_MIN_S:
            timing.append("traced")
        return result

    def _eager_probe(self, timing, args, kwargs):
        """One of the two timed eager calls of Note [slow graph breaks]; after the second, the
        faster mode is recorded in `timing` ("eager" or "traced")."""
        probes = getattr(self, "_probes", None)
        if probes is None:
            probes = self._probes = {}
        t0 = time.perf_counter()
        result = self._fn(*args, **kwargs)
        eager = time.perf_counter() - t0
        _stats["eager_runs"] += 1
        seen = probes.setdefault(id(timing), [])
        seen.append(eager)
        if len(seen) >= 2:
            del probes[id(timing)]
            compiled = min(t for t in timing if not isinstance(t, str))
            if min(seen) < _SLOW_BREAK_RATIO * compiled:
                timing.append("eager")
                _logs.log("fallback", "%s: compiled calls took %.3g s, eager calls %.3g s; running eagerly from "
                          "now on", self._name, compiled, min(seen))
            else:
                timing.append("traced")
        return result

    def _timed_break_call(self, args, kwargs, key):
        """A call of a function with graph breaks whose key was traced before (Note [slow
        graph breaks]): traced and timed, or run eagerly once measured slower than eager."""
        timing = self._break_timing.setdefault(key, [])
        decided = timing[-1] if timing and isinstance(timing[-1], str) else None
        if decided == "eager":
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        if decided is None and len(timing) >= 2 and min(timing) >= _SLOW_BREAK_MIN_S:
            return self._eager_probe(timing, args, kwargs)
        t0 = time.perf_counter()
        result = self._trace(args, kwargs, self._key_builder(args, kwargs), key, True)
        if decided is None:
            timing.append(time.perf_counter() - t0)
            if len(timing) >= 2 and min(timing) < _SLOW_BREAK_MIN_S:
                timing.append("traced")  # fast enough: never measured again
        return result

    def _overlaps(self, objs, narrays):
        """The memory-sharing pairs among the arrays in `objs` and the captured arrays (part of
        the guard key), or None when two different arrays overlap (Note [aliasing inputs])."""
        free = self._free_arrays() if self._free else ()
        if narrays + len(free) < 2:
            return ()
        ov = _core._overlaps(list(objs) + list(free) if free else objs)
        for _, _, same in ov:
            if not same:
                return None
        return ov

    def _free_numpy_only(self):
        for _, get in self._free:
            v = get()
            if isinstance(v, _np.ndarray) and _numpy_only(v):
                return True
        return False

    def _free_arrays(self):
        out = []
        for _, get in self._free:
            v = get()
            if isinstance(v, (_core.ndarray, _np.ndarray)):
                out.append(v)
        return out

    def _run_aliased(self, args, kwargs):
        # Note [aliasing inputs]: different arrays over overlapping memory (x and x[1:], or an
        # argument viewing a captured global) are separate graph inputs, so a write through one
        # would not be seen through the other: such calls run eagerly, with eager results.
        _logs.log("fallback", "%s: arguments or captured arrays share memory; running eagerly", self._name)
        _stats["eager_runs"] += 1
        return self._fn(*args, **kwargs)

    def _key_builder(self, args, kwargs, want_labels=False):
        kb = _KeyBuilder(self._dyn, self._static_floats, want_labels)
        for i, a in enumerate(args):
            kb.add(a, i)
        for k in sorted(kwargs):
            kb.add(kwargs[k], k)
        return kb

    @staticmethod
    def _replay(e, arrays, floats):
        inputs = e.template[:]
        for x, slot in zip(arrays, e.arg_inputs):
            inputs[slot] = x if type(x) is _NDARRAY else _from_numpy(x)
        if e.transposed:
            for slot in e.transposed:
                inputs[slot] = inputs[slot].T
        if e.covered:
            for slot, pos in e.covered:
                inputs[slot] = _core._covering(inputs[slot], _valid_bytes(arrays[pos]))
        if len(floats) < e.nscalars:
            floats = floats + [0.0] * (e.nscalars - len(floats))
        _stats["graphs_run"] += 1
        if e.py_warnings:
            _replay_warnings(e.py_warnings, True)
        if config.repro and e.backend != "eager" and not e.plan and _repro.enabled():
            return e.rebuild(_repro.run_checked(e.name, e.graph, e.backend, inputs, floats))
        return e.rebuild(e.graph(inputs, floats))

    def _limit_hit(self, args, kwargs, which, limit):
        scope = ("compiles of all compiled functions together" if which == "accumulated_recompile_limit"
                 else "compiles of this function")
        msg = (f"npc.compile: {self._name} hit config.{which} ({limit} {scope}); this call needed a new "
               f"trace: {self._describe_failure(args, kwargs)}. Running it eagerly from now on.")
        if config.fail_on_recompile_limit_hit:
            raise RuntimeError(msg)
        if not getattr(self, "_warned", False):
            warnings.warn(msg, RuntimeWarning, stacklevel=3)
            self._warned = True
        _stats["eager_runs"] += 1
        return self._fn(*args, **kwargs)

    def _labels(self, args, kwargs):
        kb = self._key_builder(args, kwargs, want_labels=True)
        labels = [(f"arg {p}" if isinstance(p, int) else f"arg {p!r}" if p == p else str(p), t)
                  for p, t in kb.labels]
        for item in _free_key(self._free, self._unguarded):
            if len(item) == 4:
                labels.append((item[0], "is the same array object"))
            elif item[1] in (list, tuple):
                labels.append((item[0], f"{item[1].__name__} with the same contents"))
            else:
                labels.append((item[0], f"== {item[2]!r}"))
        return labels

    def _describe_failure(self, args, kwargs):
        if self._last_labels is None:
            return "its first call (no graph compiled for it yet)"
        new = self._labels(args, kwargs)
        old = self._last_labels
        for (pn, tn), (po, to) in zip(new, old):
            if tn != to:
                return f"{pn}: expected {to}, got {tn}"
        if len(new) != len(old):
            return "the number of arguments changed"
        return "a symbolic size constraint or a captured global/closure value changed"

    # -- tracing
    def _update_dynamic(self, kb):
        changed = False
        for x, path in kb.arrays:
            shape = x.shape
            mark = _marked_dynamic.get(id(x))
            if mark is not None and mark[0] is x:
                self._dyn.setdefault(path, set()).update(mark[1])
            if self._dynamic is True:
                self._dyn.setdefault(path, set()).update(range(len(shape)))
            elif self._dynamic is None:
                last = self._last_shapes.get(path)
                if last is not None and len(last) == len(shape):
                    diff = {i for i, (a, b) in enumerate(zip(last, shape)) if a != b}
                    if diff - self._dyn.get(path, set()):
                        self._dyn.setdefault(path, set()).update(diff)
                        changed = True
            self._last_shapes[path] = shape
        return changed

    def _trace(self, args, kwargs, kb, key, known=False):
        if self._ncompiles and not known:
            _stats["recompiles"] += 1
            if _logs.enabled("recompiles"):
                _logs.log("recompiles", "recompiling %s: %s", self._name, self._describe_failure(args, kwargs))
        before = {k: set(v) for k, v in self._dyn.items()}
        self._update_dynamic(kb)
        if self._dyn != before:
            kb = self._key_builder(args, kwargs)
            key = (tuple(kb.key), _free_key(self._free, self._unguarded) if self._free else (), tuple(sorted(kwargs)),
                   self._overlaps([x for x, _ in kb.arrays], len(kb.arrays)))
        while True:
            try:
                return self._trace_once(args, kwargs, kb, key, known)
            except _Retrace as r:
                _stats["traces"] -= 1  # the aborted attempt does not count
                self._static_floats.update(r.paths)
                kb = self._key_builder(args, kwargs)
                key = (tuple(kb.key), _free_key(self._free, self._unguarded) if self._free else (), tuple(sorted(kwargs)),
                       self._overlaps([x for x, _ in kb.arrays], len(kb.arrays)))

    def _trace_once(self, args, kwargs, kb, key, known=False):
        _stats["traces"] += 1
        t0 = time.perf_counter()
        cxx_start = _fusion_counters().get("compile_seconds", 0.0)
        backend = self._backend
        if backend != "eager" and not _available(backend):
            if not getattr(self, "_logged_backend", False):
                _logs.log("backend", "backend %r is not available yet: running the graph eagerly", backend)
                self._logged_backend = True
            backend = "eager"
        ctx = _core._TraceContext(backend if backend not in _backends else "eager")
        if backend not in _backends:
            ctx.set_node_budget(max(int(config.segment_nodes), 0))  # Note [loops] in src/tracer/trace.cpp
        # Traced stand-ins for the arguments.
        traced = {}
        arg_inputs = []
        transposed = set()
        covered = {}  # slot -> position of the strided argument
        for x, path in kb.arrays:
            npcx = x if _is_npc(x) else _from_numpy(x)
            dyn = sorted(a for a in self._dyn.get(path, ()) if a < npcx.ndim and npcx.shape[a] >= 2)  # rank may differ
            cover = _core._strided_input(npcx)
            if cover:
                dyn = []  # Note [strided inputs] in src/tracer/trace.cpp
            t = ctx.add_input(npcx, dyn, True, _valid_bytes(x) if cover else (-1, -1))
            traced[id(x), path] = t
            arg_inputs.append(ctx.input_index(t))
            fl = npcx._flags
            if cover:
                covered[arg_inputs[-1]] = len(arg_inputs) - 1
            elif npcx.ndim >= 2 and not fl[0] and fl[1]:
                transposed.add(arg_inputs[-1])  # Note [F-ordered inputs] in src/tracer/trace.cpp
        float_paths = []
        scalar_values = []
        counter = [0]

        def subst(x, path):
            t = type(x)
            if t is float and path not in self._static_floats:
                k = counter[0]
                counter[0] += 1
                s = _sentinel(k)
                ctx.add_scalar(s, x)
                scalar_values.append(x)
                float_paths.append(path)
                return _RuntimeFloat(s)
            if isinstance(x, (_core.ndarray, _np.ndarray)):
                return traced[id(x), path]
            if t is tuple or t is list:
                return t(subst(v, f"{path}[{i}]") for i, v in enumerate(x))
            if t is dict:
                return {k: subst(v, f"{path}[{k!r}]") for k, v in x.items()}
            if isinstance(x, _np.random.Generator):
                return _GenProxy(ctx, lambda x=x: x, fresh=False)
            return x
        targs = [subst(a, i) for i, a in enumerate(args)]
        tkwargs = {k: subst(kwargs[k], k) for k in sorted(kwargs)}
        n_user = ctx.num_user_inputs
        proxy = None
        _tls.ctx = ctx
        _tls.last_break = None
        _tls.side_effects = []
        ctx.activate()
        _core._set_break_annotator(_annotate)
        _core._set_fullgraph(bool(self._fullgraph))
        try:
            fn, proxy = _traced_copy(self._fn, ctx, {k[0]: t for k, t in traced.items()})
            lists_before = self._free_lists()
            with _Patches(ctx, self._name):
                flushed = False
                try:
                    with _recording_warnings() as py_warnings:
                        try:
                            result = fn(*targs, **tkwargs)
                        except Exception as e:
                            if counter[0] and not self._fullgraph and not isinstance(e, _NO_FLUSH):
                                # The flush below, inside the recording of warnings: with
                                # runtime scalars the break raises _StaticScalar, and the
                                # function is traced again with them static (the warnings
                                # of this trace are dropped; the retrace's count).
                                ctx.graph_break("an exception in the traced function")
                                flushed = True
                            raise
                except _StaticUse:
                    raise _Retrace(float_paths)
                except _core._StaticScalar:
                    raise _Retrace(float_paths)
                except _core._GraphBreak as e:
                    raise GraphBreakError(f"graph break in {self._name} (fullgraph=True): {e}") from None
                except Exception:
                    # A break inside a protocol (buffer, number) can reach Python re-wrapped
                    # (BufferError...): the annotated reason says it was the break.
                    reason = _tls.last_break
                    if self._fullgraph and reason:
                        raise GraphBreakError(f"graph break in {self._name} (fullgraph=True): {reason}") from None
                    if not self._fullgraph and not flushed and not isinstance(sys.exc_info()[1], _NO_FLUSH):
                        # The operations recorded before the exception ran eagerly in NumPy:
                        # run them, so their warnings (or errstate's error) and writes into
                        # the arguments come first, as there.
                        try:
                            ctx.graph_break("an exception in the traced function")
                        except _core._StaticScalar:
                            # The recorded work uses runtime scalars, which a break cannot
                            # run: trace again with them static, so that it runs here.
                            raise _Retrace(float_paths) from None
                        except _core._GraphBreak:
                            pass
                    raise
            leaves, tree = _flatten(result, traced.values())
            t1 = time.perf_counter()
            cxx0 = _fusion_counters().get("compile_seconds", 0.0)
            npc_leaves = [leaf if _is_npc(leaf) else _from_numpy(_np.asarray(leaf)) for leaf in leaves]
            if counter[0] and _marked(leaves):
                raise _Retrace(float_paths)  # a runtime scalar reached an eager op: make it static
            outs = ctx.finish(npc_leaves)
            cut = ctx.num_cuts > 0 and not ctx.breaks  # a plan (Note [loops])
            bound_now = ctx.top_inputs if cut else ctx.bound_inputs
            if counter[0] and _marked(bound_now[ctx.num_user_inputs:]):
                raise _Retrace(float_paths)
        finally:
            if proxy is not None:
                proxy.finish()
            _core._deactivate_trace()
            _tls.ctx = None
            _core._set_fullgraph(False)
            _core._set_break_annotator(None)
        t2 = time.perf_counter()
        if lists_before:
            changed = {n for n, k in self._free_lists().items() if lists_before.get(n) != k}
            if changed - self._unguarded:
                self._unguarded |= changed
                key = (key[0], _free_key(self._free, self._unguarded), key[2], key[3])
        numpy_out = kb.numpy_in and not kb.npc_in
        nbreaks = len(ctx.breaks)
        _stats["graph_breaks"] += nbreaks
        self.last_breaks = list(ctx.breaks)
        self.last_graphs = list(ctx.segment_graphs)
        self.last_ops_per_graph = list(ctx.ops_per_graph)
        self.last_side_effects = list(_tls.side_effects)
        self.last_cuts = ctx.num_cuts
        self.last_segments_reused = ctx.segments_reused
        _stats["segment_cuts"] += ctx.num_cuts
        _stats["segments_reused"] += ctx.segments_reused
        if not known:
            self._ncompiles += 1
            _compiles[0] += 1
            self._last_labels = self._labels(args, kwargs)
        graph = ctx.take_graph(backend if backend not in _backends else "eager")
        plan = ctx.take_plan() if graph is None and cut else None  # Note [loops]
        t3 = time.perf_counter()
        cxx = _fusion_counters().get("compile_seconds", 0.0) - cxx0
        # The first run compiles through the backend too: C++ compile time is reported apart.
        cxx_trace = cxx0 - cxx_start  # segments of graph breaks compile while tracing
        if not known:  # one row per compile, not per call of a function with breaks
            _times.setdefault(self._name, []).append({"trace": max(t1 - t0 - cxx_trace, 0.0),
                                                      "passes_and_run": max(t2 - t1 - cxx, 0.0),
                                                      "backend_compile": t3 - t2, "cxx_compile": cxx + cxx_trace})
            self._debug_dump(ctx, graph)
        if _logs.enabled("guards") and not known:
            _logs.log("guards", "%s guards:\n  %s", self._name,
                      "\n  ".join(f"{p}: {t}" for p, t in self._last_labels))
        if _logs.enabled("output_code") and graph is not None:
            _logs.log("output_code", "%s graph:\n%s", self._name, str(graph))
        if nbreaks:
            self._breaks = True
            self._break_keys.add(key)
        elif graph is not None or plan is not None:
            e = _Entry()
            e.timing = []  # Note [slow graph breaks]: replays are measured against an eager call
            e.name = self._name
            e.backend = backend
            e.graph = graph if plan is None else plan
            e.plan = plan is not None
            if backend in _backends:
                e.graph = _PyBackendGraph(graph, _backends[backend](graph))
            e.arg_inputs = arg_inputs
            e.transposed = sorted(transposed)
            e.covered = sorted(covered.items())
            bound = bound_now
            e.captured = [(i, bound[i]) for i in range(n_user, len(bound))]
            e.ninputs = len(bound)
            e.nscalars = counter[0]
            e.out_tree = tree
            e.numpy_out = numpy_out
            e.constraints = _arg_constraints(ctx.constraints, arg_inputs, transposed, kb.arrays)
            e.template = [None] * e.ninputs
            for slot, arr in e.captured:
                e.template[slot] = arr
            e.rebuild = _make_rebuild(tree, numpy_out)
            e.py_warnings = py_warnings  # Note [warnings of traced Python]
            self._entries.setdefault(key, []).append(e)
            if config.repro and backend != "eager" and backend not in _backends and not e.plan and _repro.enabled():
                # The first run already ran on the backend: check it against the eager one.
                outs = _repro.run_checked(e.name, graph, backend, ctx.bound_inputs, scalar_values,
                                          outs=list(outs))
        return _rebuild(tree, list(outs), numpy_out)

    def _free_lists(self):
        """The contents keys of the lists and tuples among the function's globals/closures."""
        out = {}
        for name, get in self._free:
            v = get()
            if type(v) is list or type(v) is tuple:
                out[name] = _contents_key(v, 0)
        return out

    def _debug_dump(self, ctx, graph):
        if os.environ.get("NPC_COMPILE_DEBUG", "0") in ("", "0"):
            return
        root = os.environ.get("NPC_COMPILE_DEBUG_DIR", os.path.join(os.getcwd(), "npc_debug"))
        d = os.path.join(root, f"{self._name.replace('<', '').replace('>', '')}_{self._ncompiles}")
        os.makedirs(d, exist_ok=True)
        for i, (raw, done) in enumerate(zip(ctx.segment_graphs_raw, ctx.segment_graphs)):
            with open(os.path.join(d, f"graph{i}_0_traced.txt"), "w") as f:
                f.write(raw)
            with open(os.path.join(d, f"graph{i}_1_after_dce.txt"), "w") as f:
                f.write(done)
        with open(os.path.join(d, "guards.txt"), "w") as f:
            f.write("\n".join(f"{p}: {t}" for p, t in self._last_labels) + "\n")
        with open(os.path.join(d, "breaks.txt"), "w") as f:
            f.write("\n".join(ctx.breaks) + "\n")
        _logs.log("output_code", "%s: debug files in %s", self._name, d)


class _Retrace(Exception):
    def __init__(self, paths):
        super().__init__()
        self.paths = paths


class _PyBackendGraph:
    def __init__(self, graph, run):
        self._g, self._run = graph, run

    def __call__(self, inputs, scalars):
        return self._run(inputs, scalars)

    def __str__(self):
        return str(self._g)


def _flatten(obj, inputs=()):
    """Array leaves of a result and a tree to rebuild it (non-array leaves are static).
    0-d results that eager NumPy returns as NumPy scalars (ufuncs, reductions, `x[0]`) become
    scalars, the others (`where`, `astype`, views, `zeros(())`) stay 0-d arrays (Note [scalar
    results] in src/tracer/trace.hpp); 0-d arrays the function received stay arrays."""
    leaves = []
    ids = {id(i) for i in inputs}

    def walk(x):
        if isinstance(x, (_core.ndarray, _np.ndarray)):
            leaves.append(x)
            scalar = x.ndim == 0 and id(x) not in ids and _is_npc(x) and _core._scalar_result(x)
            return ("A", len(leaves) - 1, scalar)
        t = type(x)
        if t is tuple or t is list:
            return (t, [walk(v) for v in x])
        if t is dict:
            return (dict, [(k, walk(v)) for k, v in x.items()])
        return ("S", x)
    return leaves, walk(obj)


def _rebuild(tree, outs, numpy_out):
    from .._array import _numpy_view

    def build(t):
        kind = t[0]
        if kind == "A":
            a = outs[t[1]]
            if numpy_out:
                v = _numpy_view(a)
                return v[()] if t[2] else v
            return a._scalar() if t[2] else a
        if kind == "S":
            return t[1]
        if kind is dict:
            return {k: build(v) for k, v in t[1]}
        return kind(build(v) for v in t[1])
    return build(tree)


def compile(fn=None, *, fullgraph=False, backend="fused", dynamic=None):
    """Compiles `fn` by tracing (npc's torch.compile / jax.jit).

    Parameters
    ----------
    fn : callable
        A function of arrays (npc or NumPy), Python scalars and containers of them.
    fullgraph : bool
        Raise GraphBreakError at the first graph break instead of splitting the graph.
    backend : {"fused", "eager"}
        "fused": fused kernels (falls back to "eager", logged, until that backend is
        available); "eager": run the captured graph op by op with npc's eager kernels.
    dynamic : bool or None
        None: dims that change between calls become symbolic at the first recompile;
        True: all dims (of size >= 2) are symbolic from the start; False: never.

    Returns
    -------
    CompiledFunction
        Called like `fn`; results equal `fn`'s (NumPy arrays in -> NumPy arrays out).
    """
    if fn is None:
        return lambda f: compile(f, fullgraph=fullgraph, backend=backend, dynamic=dynamic)
    if not callable(fn):
        raise TypeError(f"npc.compile expects a callable, got {type(fn).__name__}")
    return CompiledFunction(fn, fullgraph=fullgraph, backend=backend, dynamic=dynamic)


jit = compile


# ---------------------------------------------------------------- explain
class ExplainOutput:
    """What npc.explain found: graphs, breaks (with the user's line), ops, guards."""

    def __init__(self, f):
        keep = [i for i, g in enumerate(f.last_graphs) if g.strip() != "return"]
        f_graphs = [f.last_graphs[i] for i in keep]
        self.graph_count = len(f_graphs)
        self.graph_break_count = len(f.last_breaks)
        self.break_reasons = list(f.last_breaks)
        self.ops_per_graph = [f.last_ops_per_graph[i] for i in keep]
        self.op_count = sum(self.ops_per_graph)
        self.guards = [f"{p}: {t}" for p, t in (f._last_labels or [])]
        self.graphs = f_graphs
        self.side_effects = list(f.last_side_effects)
        # Note [loops] in src/tracer/trace.cpp: segments cut at the node budget, and how many
        # segments (cut or broken) were found by structure instead of built.
        self.segment_cuts = f.last_cuts
        self.segments_reused = f.last_segments_reused

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)] or ["  (none)"]
        lines.append("Ops per Graph: " + ", ".join(map(str, self.ops_per_graph)))
        if self.segment_cuts or self.segments_reused:
            lines.append(f"Segments: {self.graph_count} ({self.segment_cuts} cuts at the node budget, "
                         f"{self.segments_reused} reused by structure)")
        if self.side_effects:
            lines.append("Python side effects (not replayed):")
            lines += [f"  {x}" for x in self.side_effects]
        lines.append("Guards:")
        lines += [f"  {g}" for g in self.guards]
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines += ["  " + x for x in g.rstrip().splitlines()]
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn):
    """``npc.explain(fn)(*args)``: traces fn once (backend "eager") and returns an
    ExplainOutput with graph_count, graph_break_count, op_count, break_reasons, ops_per_graph,
    guards, side_effects (the Python side effects it detected, which run while tracing only)
    and the graphs' text."""
    inner = fn._fn if isinstance(fn, CompiledFunction) else fn

    def run_explain(*args, **kwargs):
        f = CompiledFunction(inner, backend="eager")
        _all_compiled.remove(f)
        saved = dict(_stats)
        try:
            f(*args, **kwargs)
        finally:
            _stats.update(saved)
        return ExplainOutput(f)
    return run_explain
