"""npc.compile: capture a function's array program as a graph, cache it by guards, replay it.

How it works (see docs/compile.md): calling a compiled function computes a guard key from
its arguments (types, dtypes, shapes, contiguity, static Python values) and from the Python
numbers and arrays it reads from globals and closure cells. A hit replays the cached graph
without running Python. A miss calls the function with traced arrays: every npc op records
a node of the graph IR (src/tracer); anything that needs a concrete value is a graph break,
after which functions re-run their Python on every call.

This module holds the compiled function, its cache of graphs and its recompile rules; the
guard keys are in _guards.py, the tracing of the user's Python in _capture.py, graph breaks
in _breaks.py, the compiled-or-eager choice in _timing.py, conversions of arguments in
_convert.py, results in _results.py, counters, backends and modes in _state.py, explain in
_explain.py.
"""
import functools
import os
import sys
import time
import types
import warnings

import numpy as _np

from .. import _core
from .._array import _ActingAsNumpy
from .._config import config
from . import _logs
from . import _repro
from . import _persist, _reads
from ._breaks import _annotate, _run_outside
from ._capture import (_NO_FLUSH, _GenProxy, _Patches, _RuntimeFloat, _RuntimeInt, _StaticUse, _TraceAgain, _marked,
                       _recording_warnings,
                       _show_deferred,
                       _python_warnings, _replay_warnings, _sentinel,
                       _sentinel_index)
from ._guards import (_short_repr, _AttrReads, _KeyBuilder, _StandIns, _attr_key, _free_key, _free_state,
                      _free_values, _int_bounds, _int_class, _numpy_only, _traced_copy, _valid_bytes)
from ._reach import ReadState, free_from_names, reached_free
from ._guards import where_label
from ._convert import _NDARRAY, _from_numpy, _npc_view_args, _numpy_result, _view_of
from ._results import _Aliases, _changed, _flatten, _make_rebuild, _rebuild, _write_back_realized
from ._timing import _Timing, _typical
from ._state import (_all_compiled, _available, _backends, _compiles, _epoch, _fusion_counters, _is_npc,
                     _marked_dynamic, _stats, _thread_flag, _times, _tls)

__all__ = ["compile", "jit", "run", "disable", "GraphBreakError", "CompiledFunction", "config"]


def _code_names(code, depth=0):
    """The global and attribute names `code` and the functions defined in it read."""
    names = set(code.co_names)
    if depth < 4:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                names |= _code_names(c, depth + 1)
    return names


class GraphBreakError(RuntimeError):
    """Raised by a ``fullgraph=True`` compiled function at its first graph break; the message
    names the reason and the user's file and line."""


config.register("recompile_limit", 8,
                "traces per compiled function before it warns and runs eagerly")
config.register("accumulated_recompile_limit", 256,
                "traces of all compiled functions before new misses run eagerly")
config.register("fail_on_recompile_limit_hit", False,
                "raise instead of warning and running eagerly when a recompile limit is hit")
config.register("eager_if_faster", os.environ.get("NPC_EAGER_IF_FASTER", "1") != "0",
                "run a function with graph breaks eagerly when its traced calls are measured slower "
                "than an eager call (Note [slow graph breaks])")

config.register("segment_nodes", int(os.environ.get("NPC_SEGMENT_NODES", "10000")),
                "nodes of a traced graph after which it is cut into a new segment (Note [loops] in "
                "src/tracer/trace_segments.cpp); 0: never")


def _arrays_in(values, depth=0):
    """The arrays among `values` and inside their lists and tuples (as deep as the guard key
    looks, _contents_key)."""
    out = []
    for v in values:
        if isinstance(v, (_core.ndarray, _np.ndarray)):
            out.append(v)
        elif (type(v) is list or type(v) is tuple) and depth < 4:
            out.extend(_arrays_in(v, depth + 1))
    return out


class _Entry:
    __slots__ = ("name", "backend", "graph", "arg_inputs", "transposed", "covered", "captured", "out_tree", "constraints",
                 "numpy_out", "labels",
                 "ninputs", "nscalars", "template", "rebuild", "py_warnings", "timing", "plan", "keep_alive",
                 "aliases")


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


def _debugging():
    """Whether NPC_COMPILE_DEBUG asks for each trace's graphs in a folder (_debug_dump)."""
    return os.environ.get("NPC_COMPILE_DEBUG", "0") not in ("", "0")


# Note [random generators the function reads]
# A draw of a NumPy Generator or RandomState that the function reads as a global or a closure
# value (`rng = np.random.default_rng(0)` at module level) moves that object's state on every
# call; traced, it ran once and its values were replayed. Arguments and generators made inside
# the function are proxies whose draws are host calls (_capture._GenProxy); a global cannot be
# swapped for one, so a function whose code (or the code it defines) names such a value runs
# eagerly, as NumPy, on every call. One that the code of a helper reads is found among the
# globals the trace reached (Note [globals read while tracing] in _reach.py): the traced call
# ran NumPy's draws itself, and the calls after it run eagerly.
_RNG_TYPES = (_np.random.Generator, _np.random.RandomState, _np.random.BitGenerator)


def _random_state_reads(fn):
    """The names of NumPy random generators among fn's globals and closure values that its
    code reads."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    glob = getattr(fn, "__globals__", {})
    found, stack = [], [code]
    while stack:
        c = stack.pop()
        found.extend(n for n in c.co_names if isinstance(glob.get(n), _RNG_TYPES))
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            if isinstance(cell.cell_contents, _RNG_TYPES):
                found.append(name)
        except ValueError:  # an empty cell
            pass
    return found


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
        self._nown = len(self._free)  # the function's own names; then those its traces reached
        self._name = getattr(fn, "__qualname__", repr(fn))
        self._trace_cache = True  # config.trace_cache applies (npc.explain always traces)
        self._clear()
        # npc's attributes, not the user's (_guards._own_attr).
        self._own_attrs = frozenset(self.__dict__) | {"_own_attrs", "_warned"}
        _all_compiled.add(self)

    def _clear(self):
        self._entries = {}
        self._ncompiles = 0
        self._breaks = False
        self._break_keys = set()  # guard keys traced already (functions with breaks)
        self._break_timing = {}  # key -> _Timing (Note [slow graph breaks])
        self._kept_modes = {}  # key -> the eager mode an earlier process decided, or None (looked up)
        self._mutates = False  # changes a list or dict argument (Note [eager npc calls])
        # Calls NumPy's shuffle on an array (Note [shuffles of traced arrays]): its code names a
        # shuffle (also on a branch no trace took yet), or a trace called one.
        code = getattr(self._fn, "__code__", None)
        self._numpy_only_calls = code is not None and "shuffle" in _code_names(code)
        self._dyn = {}          # path -> set of symbolic axes
        self._last_shapes = {}  # path -> shape at the last trace
        # Note [dims made static]: path -> axes that stay static although their sizes vary;
        # False once a view of symbolic sizes must break the graph instead (dims the caller
        # marked dynamic, or sizes of no argument).
        self._static_dims = {}
        self._static_views = True
        self._static_floats = set()
        # Note [runtime ints] in _guards.py: int paths traced as runtime scalars, int paths
        # static for good, and each int path's value at the last trace.
        self._dyn_ints = set()
        self._static_ints = set()
        self._last_ints = {}
        self._int_bounds = {}  # path -> the class bounds of a runtime int (_int_bounds)
        self.last_runtime_ints = []
        self._unguarded = set()  # names the function changes while tracing (Note [globals read while tracing])
        self._attr_guards = {}  # attribute reads guarded, in order (Note [attribute reads])
        self._attr_unguarded = set()  # those the function changes (side effects)
        self._free = self._free[:self._nown]
        self._reach = []  # (module name, path) of the names guarded past the function's own
        self._free_getters = dict(self._free)
        self._last_labels = None
        self.last_breaks = []
        self.last_graphs = []
        self.last_ops_per_graph = []
        self.last_side_effects = []
        self._eager_why = None  # why every call runs the function eagerly (or None)
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
        if self._eager_why is not None:
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        _epoch[0] += 1
        farrays = []
        free = self._free_part(args, kwargs, farrays) if self._free or self._attr_guards else ()
        if farrays and any(isinstance(v, _np.ndarray) and _numpy_only(v) for v in farrays):
            # Note [arguments that stay NumPy]: a captured matrix or masked array meets traced
            # arrays in its own operators, which would give npc's semantics, not NumPy's.
            _logs.log("fallback", "%s: a captured array is an ndarray subclass or unaligned; running eagerly",
                      self._name)
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        fast = None
        if not kwargs and not self._dyn and not self._static_floats and not self._dyn_ints:
            fast = _core._guard_key(args)
        if fast is not None:
            arrays, floats = fast[1], fast[2]
            ov = self._overlaps(args, len(arrays), farrays)
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
            ov = self._overlaps(arrays, len(arrays), farrays)
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
                        return self._replay(e, arrays, floats, args, kwargs)
                    return self._timed_replay(e, timing, args, kwargs, arrays, floats, key, len(cands) == 1)
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
        if config.eager_if_faster and config.mode_cache and self._keeps() and not known:
            mode = self._kept_mode(key, args, kwargs)  # Note [modes kept across processes] in _persist.py
            if mode is not None:
                _stats["eager_runs"] += 1
                return self._run_eager(mode, args, kwargs)
        if config.trace_cache and self._keeps() and not known and self._fresh():
            e = self._load_kept(args, kwargs, key, arrays)  # Note [persisted traces] in _persist.py
            if e is not None:
                if not config.eager_if_faster:
                    return self._replay(e, arrays, floats, args, kwargs)
                return self._timed_replay(e, e.timing, args, kwargs, arrays, floats, key, True)
        return self._trace(args, kwargs, self._key_builder(args, kwargs), key, known)

    def _plain_state(self):
        """Whether the guard state is still the initial one (no dynamic sizes, static floats,
        runtime ints, unguarded lists, attribute guards, breaks or changed containers)."""
        return not (self._dyn or self._static_floats or self._dyn_ints or self._static_ints or self._int_bounds
                    or self._unguarded or self._attr_guards or self._breaks or self._mutates)

    def _fresh(self):
        return not self._ncompiles and not self._entries and self._plain_state()

    def _load_kept(self, args, kwargs, key, arrays):
        """The entry a first trace in an earlier process kept for this call, installed as this
        function's first compile (Note [persisted traces] in _persist.py), or None."""
        name, kbytes = _persist.disk_name(self, key)
        if name is None:
            return None
        got = _persist.load(self, key, name, kbytes)
        if got is None:
            return None
        meta, graph = got
        e = _Entry()
        e.timing = []
        e.name = self._name
        e.backend = meta["backend"]
        e.graph = graph
        e.plan = meta["kind"] == "plan"
        e.arg_inputs = meta["arg_inputs"]
        e.transposed = meta["transposed"]
        e.covered = meta["covered"]
        e.captured = [(slot, _from_numpy(_np.frombuffer(data, _np.dtype(dt)).reshape(shape).copy()))
                      for slot, dt, shape, data in meta["constants"]]
        e.keep_alive = []
        e.ninputs = meta["ninputs"]
        e.nscalars = meta["nscalars"]
        e.out_tree = meta["out_tree"]
        e.numpy_out = meta["numpy_out"]
        e.constraints = meta["constraints"]
        e.template = [None] * e.ninputs
        for slot, arr in e.captured:
            e.template[slot] = arr
        e.aliases = None
        e.rebuild = _make_rebuild(e.out_tree, e.numpy_out)
        e.py_warnings = []
        if e.constraints and not _constraints_hold(e.constraints, arrays):
            return None
        self._last_shapes.update(meta["last_shapes"])
        self._last_ints.update(meta["last_ints"])
        # Note [globals read while tracing]: what the kept trace's code reached is guarded here too.
        if self._extend_free(free_from_names(meta["reach"], getattr(self._fn, "__globals__", None))):
            key = (key[0], self._free_part(args, kwargs), key[2], key[3])
        self._ncompiles += 1
        _compiles[0] += 1
        _stats["traces_loaded"] += 1
        self._last_labels = self._labels(args, kwargs)
        self._entries[key] = [e]
        _logs.log("guards", "%s: first trace loaded from the trace cache", self._name)
        return e

    def _kept_mode(self, key, args, kwargs):
        """The eager mode an earlier process decided for guard key `key` (Note [modes kept
        across processes] in _persist.py), or None; the disk is read once per key."""
        try:
            mode = self._kept_modes[key]
        except KeyError:
            got = _persist.load_mode(self, key)
            mode = None
            if got is not None:
                mode, traced, eager = got
                _logs.log("fallback", "%s: compiled calls took %.3g s, eager calls %.3g s%s (decided in an earlier "
                          "process); running eagerly", self._name, traced, eager,
                          " (on npc views of the NumPy arguments)" if mode == "npc" else "")
            if len(self._kept_modes) >= 1024:
                self._kept_modes.clear()
            self._kept_modes[key] = mode
        if mode == "npc" and any(isinstance(a, (list, dict)) for a in (*args, *kwargs.values())):
            # This process has not seen whether the function changes such an argument, which
            # rules npc views out (Note [eager npc calls]): the function as it is.
            return "eager"
        return mode

    def _keep(self, e, key, keep, rec, graph, plan, py_warnings):
        """Writes entry `e` of this first trace to the trace cache when it is fit to keep
        (Note [persisted traces] in _persist.py)."""
        key0, name, kbytes = keep
        if (self._own_key(key) != key0 or not self._plain_state() or None in self._reach or e.keep_alive or e.aliases is not None
                or py_warnings or e.backend not in ("fused", "eager")):
            return
        constants = _persist.constants(e.captured)
        if constants is None:
            return
        try:
            evidence = rec.evidence()
            if evidence is None:
                return
            try:
                payload = (plan if e.plan else graph).serialize()
            except ValueError:
                return  # host calls
            _persist.store(self, kbytes, name, evidence, e, payload, "plan" if e.plan else "graph", constants,
                           self._last_shapes, self._last_ints, self._reach)
        except Exception as exc:  # noqa: BLE001 - a cache: the call's result stands whatever it meets
            _logs.log("guards", "%s: trace not kept: %r", self._name, exc)

    def _timed_replay(self, e, timing, args, kwargs, arrays, floats, key, only):
        """A replay of entry `e` (guard key `key`; `only`: the key's only entry) while its
        speed against eager calls is being measured (Note [slow graph breaks]; the same rule
        for whole graphs: a traced loop of thousands of tiny kernels can cost more than the
        eager operations it replaces)."""
        key = key if only and not e.constraints else None  # Note [modes kept across processes]
        if not timing:
            timing.append(self._new_timing(self._eager_modes(args, kwargs) if e.numpy_out else ("eager",), key,
                                           args, kwargs))
        t = timing[0]
        if t.mode == "traced":
            e.timing = None  # decided: replays go the plain way from now on
            return self._replay(e, arrays, floats, args, kwargs)
        if t.mode is not None:
            _stats["eager_runs"] += 1
            return self._run_eager(t.mode, args, kwargs)
        if t.next() != "traced":
            return self._eager_probe(t, t.next(), args, kwargs, key)
        t0 = time.perf_counter()
        result = self._replay(e, arrays, floats, args, kwargs)
        self._timed(t, "traced", time.perf_counter() - t0, key)
        return result

    def _new_timing(self, alts, key, args, kwargs):
        """The _Timing of guard key `key`'s calls: decided already when an earlier process
        kept an eager mode for the key. (__call__ looks the mode up before a key's first
        trace; a key that the trace itself changes, by making a float static, is looked up
        here, at its first timed call: Note [modes kept across processes] in _persist.py.)"""
        t = _Timing(alts)
        if key is not None and config.mode_cache and self._keeps():
            mode = self._kept_mode(key, args, kwargs)
            if mode is not None:
                t.mode = mode if mode in alts else "eager"
        return t

    def _timed(self, t, mode, seconds, key):
        """Records a timed call in `t`; logs a decision for eager calls and keeps it for later
        processes under guard key `key` (None: not kept)."""
        chosen = t.add(mode, seconds)
        if chosen is not None and chosen != "traced":
            _logs.log("fallback", "%s: compiled calls took %.3g s, eager calls %.3g s%s; running eagerly from "
                      "now on", self._name, _typical(t.traced), _typical(t.times[chosen]),
                      " (on npc views of the NumPy arguments)" if chosen == "npc" else "")
            if key is not None and config.mode_cache and self._keeps():
                # Note [modes kept across processes] in _persist.py
                _persist.store_mode(self, key, chosen, _typical(t.traced), _typical(t.times[chosen]))

    def _eager_modes(self, args, kwargs):
        """The eager modes to time against traced calls (Note [eager npc calls])."""
        if self._mutates or self._numpy_only_calls or _npc_view_args(args, kwargs) is None:
            return ("eager",)
        return ("eager", "npc")

    def _run_eager(self, mode, args, kwargs):
        """An eager call: the function as it is, or on npc views of its NumPy arguments."""
        if mode == "npc":
            conv = _npc_view_args(args, kwargs)
            if conv is not None:
                nargs, nkwargs, originals = conv
                with _ActingAsNumpy():  # Note [classes of traced values] in _array.py
                    r = self._fn(*nargs, **nkwargs)
                return _numpy_result(r, originals)
        return self._fn(*args, **kwargs)

    def _eager_probe(self, t, mode, args, kwargs, key):
        """One of the timed eager calls of Note [slow graph breaks]."""
        t0 = time.perf_counter()
        result = self._run_eager(mode, args, kwargs)
        seconds = time.perf_counter() - t0
        _stats["eager_runs"] += 1
        self._timed(t, mode, seconds, key)
        return result

    def _timed_break_call(self, args, kwargs, key):
        """A call of a function with graph breaks whose key was traced before (Note [slow
        graph breaks]): traced (and timed until decided), or run eagerly."""
        t = self._break_timing.get(key)
        if t is None:
            t = self._break_timing[key] = self._new_timing(self._eager_modes(args, kwargs), key, args, kwargs)
        if t.mode is not None and t.mode != "traced":
            _stats["eager_runs"] += 1
            return self._run_eager(t.mode, args, kwargs)
        if t.mode is None and t.next() != "traced":
            return self._eager_probe(t, t.next(), args, kwargs, key)
        t0 = time.perf_counter()
        result = self._trace(args, kwargs, self._key_builder(args, kwargs), key, True)
        if t.mode is None:
            self._timed(t, "traced", time.perf_counter() - t0, key)
        return result

    def _overlaps(self, objs, narrays, free=None):
        """The memory-sharing pairs among the arrays in `objs` and the captured arrays (`free`,
        else looked up; part of the guard key), or None when two different arrays overlap
        (Note [aliasing inputs])."""
        if free is None:
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
        kb = _KeyBuilder(self._dyn, self._static_floats, want_labels, self._dyn_ints, self._int_bounds)
        for i, a in enumerate(args):
            kb.add(a, i)
        for k in sorted(kwargs):
            kb.add(kwargs[k], k)
        return kb

    @staticmethod
    def _replay(e, arrays, floats, args=(), kwargs=None):
        inputs = e.template[:]
        for x, slot in zip(arrays, e.arg_inputs):
            inputs[slot] = x if type(x) is _NDARRAY else _view_of(x)
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
            outs = _repro.run_checked(e.name, e.graph, e.backend, inputs, floats)
        else:
            outs = e.graph(inputs, floats)
        if e.aliases is None:
            return e.rebuild(outs)
        # Note [results that view inputs]: arguments and views of them, from this call's arrays.
        return _rebuild(e.out_tree, list(outs), e.numpy_out, e.aliases(args, kwargs or {}, inputs))

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
            elif item[1] == "is":
                labels.append((item[0], "is the same object"))
            elif item[1] == "missing":
                labels.append((item[0], "is not defined (a builtin)"))
            elif item[1] in (list, tuple, dict, set, frozenset):
                labels.append((item[0], f"{item[1].__name__} with the same contents"))
            else:
                labels.append((item[0], f"== {_short_repr(item[2])}"))
        for where in self._attr_guards:  # Note [attribute reads]
            if where not in self._attr_unguarded:
                labels.append((where_label(where), "attribute read while tracing (same array object, or equal value)"))
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
    # Note [dims made static]
    # An argument dim whose size differs between calls becomes a symbol (automatic dynamic
    # shapes, as torch.compile's), so that one graph serves every size. A symbol is only a
    # name for an input's size, though: a view whose geometry needs the size (`x[:-1]`,
    # `A[0]`, `A[:, 1:]`; Note [views of symbolic sizes] in src/tracer/trace_nodes.cpp) has no
    # exact node, and such a graph would break at the view on every call, running its Python
    # each time. So with dynamic=None the trace stops there (_core._StaticShape) and the
    # function is traced again with the dims of the viewed buffer static for good: each new
    # size is then a recompile (a trace; its kernels are the cached size-generic ones), and
    # the other dims stay symbolic. Dims the caller marked dynamic (npc.mark_dynamic) and
    # dynamic=True keep their symbols and the break.
    def _update_dynamic(self, kb):
        changed = False
        for x, path in kb.arrays:
            shape = x.shape
            mark = _marked_dynamic.get(id(x))
            if mark is not None and mark[0] is x:
                self._dyn.setdefault(path, set()).update(mark[1])
                self._static_views = False  # the caller asked for these symbols
            if self._dynamic is True:
                self._dyn.setdefault(path, set()).update(range(len(shape)))
            elif self._dynamic is None:
                last = self._last_shapes.get(path)
                if last is not None and len(last) == len(shape):
                    diff = {i for i, (a, b) in enumerate(zip(last, shape)) if a != b}
                    diff -= self._static_dims.get(path, set())  # Note [dims made static]
                    if diff - self._dyn.get(path, set()):
                        self._dyn.setdefault(path, set()).update(diff)
                        changed = True
            self._last_shapes[path] = shape
        return changed

    def _key_of(self, args, kwargs, kb):
        """The guard key that __call__ builds for these arguments now (the C++ one on its
        fast path), so that a retrace stores its entry where the next such call looks."""
        if not kwargs and not self._dyn and not self._static_floats and not self._dyn_ints:
            fast = _core._guard_key(args)
            if fast is not None:
                return (fast[0], self._free_part(args, kwargs), (), self._overlaps(args, len(fast[1])))
        return (tuple(kb.key), self._free_part(args, kwargs), tuple(sorted(kwargs)),
                self._overlaps([x for x, _ in kb.arrays], len(kb.arrays)))

    def _update_ints(self, kb):
        """Note [runtime ints] in _guards.py: int paths whose value differs from the last
        trace's (all of them with dynamic=True) become runtime ints; True when one did."""
        changed = False
        if self._dynamic is False:
            return False
        for path, v in kb.ints.items():
            last = self._last_ints.get(path)
            self._last_ints[path] = v
            if path in self._dyn_ints or path in self._static_ints:
                continue
            if self._dynamic is True or (last is not None and last != v):
                self._dyn_ints.add(path)
                changed = True
        return changed

    def _trace(self, args, kwargs, kb, key, known=False):
        rng = _random_state_reads(self._fn)
        if rng:
            # Note [random generators the function reads]
            self._eager_why = (f"reads the NumPy random generator {rng[0]!r} as a global or closure value: "
                               "its draws run as NumPy's on every call")
            _logs.log("fallback", "%s: %s; running eagerly", self._name, self._eager_why)
            _stats["eager_runs"] += 1
            return self._fn(*args, **kwargs)
        if self._ncompiles and not known:
            _stats["recompiles"] += 1
            if _logs.enabled("recompiles"):
                _logs.log("recompiles", "recompiling %s: %s", self._name, self._describe_failure(args, kwargs))
        keep = None
        if config.trace_cache and self._keeps() and not known and self._fresh():
            name, kbytes = _persist.disk_name(self, key)
            keep = (key, name, kbytes) if name is not None else None
        before = {k: set(v) for k, v in self._dyn.items()}
        self._update_dynamic(kb)
        ints_changed = self._update_ints(kb)
        if self._dyn != before or ints_changed:
            kb = self._key_builder(args, kwargs)
            key = self._key_of(args, kwargs, kb)
        tried = set()  # int paths static for this call only, until their trace succeeds
        while True:
            try:
                return self._trace_once(args, kwargs, kb, key, known, keep)
            except _Retrace as r:
                _stats["traces"] -= 1  # the aborted attempt does not count
                _core._discard_fp_flags()  # its pending errors are dropped with its warnings
                self._static_floats.update(r.paths)
                if r.dims is not None:  # Note [dims made static]
                    before = {p: set(a) for p, a in self._dyn.items()}
                    for path, axis in r.dims:
                        self._static_dims.setdefault(path, set()).add(axis)
                        self._dyn.get(path, set()).discard(axis)
                    self._dyn = {p: a for p, a in self._dyn.items() if a}
                    if self._dyn == before:
                        self._static_views = False  # no dim changed: break at the view instead
                if r.ints:
                    # Note [runtime ints] in _guards.py: static from now on; after an exception
                    # (`tentative`) only if the static trace does not raise it too.
                    self._dyn_ints -= r.ints
                    self._static_ints |= r.ints
                    if r.tentative:
                        tried |= r.ints
                kb = self._key_builder(args, kwargs)
                key = self._key_of(args, kwargs, kb)
            except BaseException:
                if tried:  # the exception is the function's own: the ints stay runtime
                    self._static_ints -= tried
                    self._dyn_ints |= tried
                raise

    def _trace_once(self, args, kwargs, kb, key, known=False, keep=None):
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
            ctx.set_node_budget(max(int(config.segment_nodes), 0))  # Note [loops] in src/tracer/trace_segments.cpp
        ctx.keep_raw_graphs = _debugging()  # _debug_dump
        ctx.static_views = self._dynamic is None and self._static_views  # Note [dims made static]
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
                dyn = []  # Note [strided inputs] in src/tracer/trace_inputs.cpp
            t = ctx.add_input(npcx, dyn, True, _valid_bytes(x) if cover else (-1, -1))
            traced[id(x), path] = t
            arg_inputs.append(ctx.input_index(t))
            fl = npcx._flags
            if cover:
                covered[arg_inputs[-1]] = len(arg_inputs) - 1
            elif npcx.ndim >= 2 and not fl[0] and fl[1]:
                transposed.add(arg_inputs[-1])  # Note [F-ordered inputs] in src/tracer/trace_inputs.cpp
        float_paths = []
        int_met = {}
        int_paths = {}  # scalar index of each runtime int -> its path (Note [runtime ints] in _guards.py)
        int_uses = set()  # the runtime ints used as Python values (their indices)
        scalar_values = []
        counter = [0]
        containers = []  # (caller's list or dict, traced copy, its items then): Note [mutated arguments]
        copies = {}  # id of a caller's list or dict -> its traced copy (Note [aliased containers])

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
            if t is int and path in self._dyn_ints and _int_class(x) is not None:
                k = counter[0]
                counter[0] += 1
                ctx.add_runtime_int(x)
                scalar_values.append(x)
                int_paths[k] = path
                return _RuntimeInt(x, k, int_uses)
            if isinstance(x, (_core.ndarray, _np.ndarray)):
                return traced[id(x), path]
            if t is list or t is dict:
                c = copies.get(id(x))
                if c is not None:
                    return c  # the same container again: the same copy
            if t is tuple:
                return tuple(subst(v, f"{path}[{i}]") for i, v in enumerate(x))
            if t is list:
                c = copies[id(x)] = []
                c.extend(subst(v, f"{path}[{i}]") for i, v in enumerate(x))
                containers.append((x, c, list(c)))
                return c
            if t is dict:
                c = copies[id(x)] = {}
                for k, v in x.items():
                    c[k] = subst(v, f"{path}[{k!r}]")
                containers.append((x, c, list(c.items())))
                return c
            if isinstance(x, (_np.random.Generator, _np.random.RandomState)):
                return _GenProxy(ctx, lambda x=x: x, fresh=False)
            return x
        targs = [subst(a, i) for i, a in enumerate(args)]
        tkwargs = {k: subst(kwargs[k], k) for k in sorted(kwargs)}
        # Note [undoing an abandoned trace's writes] in src/tracer/trace_segments.cpp: with
        # runtime scalars the trace may be abandoned after segments wrote into the arguments.
        ctx.keep_undo = counter[0] > 0
        n_user = ctx.num_user_inputs
        proxy = reads = rec = None
        _tls.ctx = ctx
        _tls.last_break = None
        _tls.side_effects = []
        ctx.activate()
        _core._set_break_annotator(_annotate)
        _core._set_fullgraph(bool(self._fullgraph))
        try:
            standins = _StandIns((k[0], t) for k, t in traced.items())
            fn, proxy = _traced_copy(self._fn, ctx, standins)
            # Note [attribute reads] in _guards.py: the captured objects and object arguments.
            reads = _AttrReads(ctx, standins)
            for name, get in self._free:
                v = get()
                reads.watch(v, ("free", name))
                if isinstance(v, types.MethodType):  # a bound method held in a global (`H = obj.m`)
                    reads.watch(v.__self__, ("free", name), (("self", None),))
            for i, a in enumerate(args):
                reads.watch(a, ("arg", (i,)))
                if type(a) in (list, tuple, dict):
                    reads.watch_items(a, ("arg", (i,)))
            for k in sorted(kwargs):
                reads.watch(kwargs[k], ("arg", (k,)))
                if type(kwargs[k]) in (list, tuple, dict):
                    reads.watch_items(kwargs[k], ("arg", (k,)))
            _tls.attr_reads = reads if reads.watched else None
            state_before = _free_state(self._free)
            # Note [globals read while tracing]: the code the trace runs (a re-trace of a
            # function with breaks runs its Python on every call: nothing to guard).
            read_state = ReadState()
            rec = _reads.Recorder.start(self._fn, keep is not None, read_state) if not known else None
            with _Patches(ctx, self._name) as patches:
                flushed = False
                try:
                    with _recording_warnings() as py_warnings:
                        try:
                            with _ActingAsNumpy():  # Note [classes of traced values] in _array.py
                                result = fn(*targs, **tkwargs)
                            # Note [segments in the background] in src/tracer/trace_segments.cpp:
                            # the errors and warnings of the last cut's step come from the
                            # function, as when it ran at the cut.
                            ctx.settle()
                            if ctx.static_dims:
                                # The function's own `except` swallowed the stop of Note [dims
                                # made static]: this trace is not the program's.
                                raise _core._StaticShape("a view of symbolic sizes")
                        except Exception as e:
                            if int_paths and not isinstance(e, (_StaticUse, _core._StaticScalar, _core._StaticShape,
                                                                _core._GraphBreak)):
                                # With runtime ints: traced again with them static; the
                                # exception is the function's own when that trace raises too.
                                raise _Retrace(float_paths, int_paths.values(), tentative=not int_uses) from None
                            if counter[0] and not self._fullgraph and not isinstance(e, _NO_FLUSH):
                                # The flush below, inside the recording of warnings: with
                                # runtime scalars the break raises _StaticScalar, and the
                                # function is traced again with them static (the warnings
                                # of this trace are dropped; the retrace's count).
                                ctx.graph_break("an exception in the traced function")
                                flushed = True
                            raise
                except _StaticUse:
                    raise _Retrace(float_paths, [int_paths[k] for k in int_uses])
                except _core._StaticScalar:
                    # A graph break (or a float's marker in the graph) with runtime scalars.
                    raise _Retrace(float_paths, int_paths.values())
                except _core._StaticShape:
                    # Note [dims made static]
                    paths = {i: path for (_, path), i in zip(kb.arrays, arg_inputs)}
                    dims = [(paths[i], axis) for i, axis in ctx.static_dims if i in paths]
                    raise _Retrace((), (), dims=dims)
                except _core._GraphBreak as e:
                    raise GraphBreakError(f"graph break in {self._name} (fullgraph=True): {e}") from None
                except _Retrace:
                    raise
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
                            raise _Retrace(float_paths, int_paths.values()) from None
                        except _core._GraphBreak:
                            pass
                    if not self._fullgraph and not isinstance(sys.exc_info()[1], _NO_FLUSH):
                        # What the function did to its list and dict arguments before raising
                        # happened in NumPy too (Note [mutated arguments]).
                        _write_back_realized(containers, kb, traced, kb.numpy_in and not kb.npc_in,
                                             lambda v: scalar_values[_sentinel_index(v)])
                    raise
            # Python-level warnings of the trace are shown once it is known not to be traced
            # again (Note [warnings of traced Python] in _capture.py).
            try:
                mutated = [(orig, c) for orig, c, items in containers if _changed(c, items)]
                foreign = []  # Note [results of dtypes npc lacks]
                aliases = _Aliases(ctx, kb, traced, arg_inputs, standins)  # Note [results that view inputs]
                if mutated:
                    # Note [mutated arguments]: the caller's containers get the final contents,
                    # which refer to the caller's own objects (lists, dicts, argument arrays).
                    objects = {id(c): orig for orig, c, _ in containers}
                    leaves, tree = _flatten((result, [type(c)(c) for _, c in mutated]), traced.values(), objects,
                                            lambda v: scalar_values[_sentinel_index(v)], aliases, foreign)
                else:
                    leaves, tree = _flatten(result, traced.values(), alias=aliases, foreign=foreign)
                t1 = time.perf_counter()
                cxx0 = _fusion_counters().get("compile_seconds", 0.0)
                if int_paths:
                    # Note [runtime ints] in _guards.py: ints used as Python values (returned ones
                    # too: _flatten), computed with eagerly, or never a Scalar node (the graph does
                    # not take them at run time: a path chosen by `type(k) is int`) are static.
                    int_met = dict(ctx.runtime_int_dtypes())
                    int_uses.update(ctx.unconsumed_runtime_ints())
                    int_uses.update(k for k in int_paths if k not in int_met)
                    if int_uses:
                        raise _Retrace((), [int_paths[k] for k in int_uses])
            except _Retrace:
                raise
            except BaseException:
                _show_deferred(py_warnings)
                raise
            _show_deferred(py_warnings)
            npc_leaves = [leaf if _is_npc(leaf) else _from_numpy(_np.asarray(leaf)) for leaf in leaves]
            if counter[0] and _marked(leaves):
                raise _Retrace(float_paths)  # a runtime scalar reached an eager op: make it static
            outs = ctx.finish(npc_leaves)
            cut = ctx.num_cuts > 0 and not ctx.breaks  # a plan (Note [loops])
            bound_now = ctx.top_inputs if cut else ctx.bound_inputs
            if counter[0] and _marked(bound_now[ctx.num_user_inputs:]):
                raise _Retrace(float_paths)
        except _Retrace:
            ctx.undo_writes()  # Note [undoing an abandoned trace's writes]
            raise
        finally:
            if rec is not None:
                rec.stop()
            _tls.attr_reads = None
            if reads is not None:
                reads.finish()
            if proxy is not None:
                proxy.finish()
            _core._deactivate_trace()
            _tls.ctx = None
            _core._set_fullgraph(False)
            _core._set_break_annotator(None)
        t2 = time.perf_counter()
        rekey = False
        changed = []
        if state_before:
            # Note [globals read while tracing]: names the trace changed are side effects.
            after = _free_state(self._free)
            changed = [n for n, k in state_before.items() if after.get(n, k) != k]
        if rec is not None:
            guards, changed_reached = reached_free(rec.reached(), getattr(self._fn, "__globals__", None),
                                                   self._free[:self._nown], self._free_getters, read_state)
            rng = next((label for label, get, _ in guards if isinstance(get(), _RNG_TYPES)), None)
            if rng is not None and self._eager_why is None:
                # Note [random generators the function reads]: reached through a helper; this
                # call's draws were NumPy's own (the trace ran them), later calls run eagerly.
                self._eager_why = f"its code reads the NumPy random generator {rng}: its draws run as NumPy's " \
                                  "on every call"
                _logs.log("fallback", "%s: %s; running eagerly from now on", self._name, self._eager_why)
            rekey = self._extend_free(guards)
            changed += changed_reached
        changed = set(changed)
        if changed - self._unguarded:
            self._unguarded.update(changed)
            rekey = True
        # Note [attribute reads]: attributes the trace changed after reading them (`self.n += 1`,
        # `self.history.append(...)`) are side effects too.
        attr_changed = reads.changed(self._free_getters, args, kwargs) if reads is not None else []
        if set(attr_changed) - self._attr_unguarded:
            self._attr_unguarded.update(attr_changed)
            rekey = True
        changed = sorted(changed | {where_label(w) for w in attr_changed})
        if any(w not in self._attr_guards for w in reads.guards):
            self._attr_guards.update(reads.guards)  # Note [attribute reads]
            rekey = True
        for k, path in int_paths.items():
            # Note [runtime ints] in _guards.py: the class bounds of the dtypes the int met.
            codes = int_met[k]
            b = _int_bounds(codes) if codes else None
            old = self._int_bounds.get(path)
            new = tuple(sorted(set(old or ()) | set(b))) if b is not None and old is not None else b
            if new is not None and new != old:
                self._int_bounds[path] = new
                key = (tuple(self._key_builder(args, kwargs).key),) + key[1:]
            elif new is None and old is not None:
                self._int_bounds.pop(path)  # every dtype's bounds
                key = (tuple(self._key_builder(args, kwargs).key),) + key[1:]
        if rekey:
            key = (key[0], self._free_part(args, kwargs), key[2], key[3])
        numpy_out = kb.numpy_in and not kb.npc_in
        nbreaks = len(ctx.breaks)
        _stats["graph_breaks"] += nbreaks
        self.last_breaks = list(ctx.breaks)
        self.last_graphs = ctx.segment_graphs  # a sequence of str, rendered when read
        self.last_ops_per_graph = list(ctx.ops_per_graph)
        self.last_side_effects = list(_tls.side_effects)
        self.last_cuts = ctx.num_cuts
        self.last_segments_reused = ctx.segments_reused
        self.last_runtime_ints = [f"arg {p}" if isinstance(p, int) else f"arg {p!r}" for p in int_paths.values()]
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
        if patches.numpy_only_calls and not self._numpy_only_calls:
            self._numpy_only_calls = True  # Note [shuffles of traced arrays]
            self._break_timing.clear()  # calls timed with an "npc" mode: time again without
        if mutated:
            # Note [mutated arguments]: the function runs its Python on every call, as with breaks.
            self._breaks = True
            if not self._mutates:
                self._mutates = True
                self._break_timing.clear()  # calls timed with an "npc" mode: time again without
            self._break_keys.add(key)
            why = ("the function changes a list or dict argument: it runs its Python on every call so that "
                   "the caller's container changes each time")
            self._runs_python_every_call(why, known)
            result, contents = _rebuild(tree, list(outs), numpy_out, aliases.at_trace(kb))
            for (orig, _), new in zip(mutated, contents):
                if type(orig) is list:
                    orig[:] = new
                else:
                    orig.clear()
                    orig.update(new)
            return result
        if changed:
            # Note [globals read while tracing]: the function runs its Python on every call.
            why = (f"the function changes {', '.join(changed)}: it runs its Python on every call so that the "
                   "change happens each time")
            self._runs_python_every_call(why, known)
        if foreign:
            # Note [results of dtypes npc lacks]
            # An array the function returns whose dtype npc lacks (str, object, datetime,
            # longdouble, structured, a non-native byte order) came from NumPy's own code while
            # tracing (a host call or a graph break). The graph cannot make it, so the trace's
            # object is returned as it is, and the function runs its Python on every call, as
            # with a graph break, so that each call returns a new array, as NumPy's code does.
            why = (f"the function returns an array of dtype {foreign[0].dtype}, which npc lacks: it runs its "
                   "Python on every call so that each call returns a new array")
            self._runs_python_every_call(why, known)
        if nbreaks or changed or foreign:
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
            # Note [captured arrays] in _guards.py: a captured array is guarded by its id. The
            # entry keeps the captured objects alive, so while it exists no other array (a
            # freed object reused by npc's array cache, or new memory at the same address)
            # can take that id and replay this graph with the old data.
            e.keep_alive = _arrays_in([get() for _, get in self._free]) + [v for _, _, v, _ in reads.arrays]
            e.ninputs = len(bound)
            e.nscalars = counter[0]
            e.out_tree = tree
            e.numpy_out = numpy_out
            e.constraints = _arg_constraints(ctx.constraints, arg_inputs, transposed, kb.arrays)
            e.template = [None] * e.ninputs
            for slot, arr in e.captured:
                e.template[slot] = arr
            e.aliases = aliases.for_replay(kb) if aliases.used else None
            e.rebuild = _make_rebuild(tree, numpy_out) if e.aliases is None else None
            e.py_warnings = _python_warnings(py_warnings)  # Note [warnings of traced Python]
            self._entries.setdefault(key, []).append(e)
            if rec is not None and keep is not None:
                self._keep(e, key, keep, rec, graph, plan, e.py_warnings)
            if config.repro and backend != "eager" and backend not in _backends and not e.plan and _repro.enabled():
                # The first run already ran on the backend: check it against the eager one.
                outs = _repro.run_checked(e.name, graph, backend, ctx.bound_inputs, scalar_values,
                                          outs=list(outs))
        return _rebuild(tree, list(outs), numpy_out, aliases.at_trace(kb) if aliases.used else None)

    def _extend_free(self, guards):
        """Adds `guards` (label, getter, (module name, path)) of reached_free to the names the
        guard key compares; whether there were any."""
        for label, get, name in guards:
            self._free.append((label, get))
            self._free_getters[label] = get
            self._reach.append(name)
        return bool(guards)

    def _own_key(self, key):
        """Guard key `key` less the names reached past the function's own: what a kept trace
        or mode is named by (a later process reaches them in its first call)."""
        if len(self._free) == self._nown:
            return key
        reached = {label for label, _ in self._free[self._nown:]}
        return (key[0], tuple(item for item in key[1] if item[0] not in reached), key[2], key[3])

    def _free_part(self, args, kwargs, arrays=None):
        """The guard key's part of the globals and closures the function reads (and those of
        the code its traces reached: Note [globals read while tracing] in _reach.py), and of the
        attributes it read from captured objects and object arguments (Note [attribute reads])."""
        key = _free_key(self._free, self._unguarded, arrays) if self._free else ()
        if self._attr_guards:
            key += _attr_key(self._attr_guards, self._free_getters, args, kwargs, self._attr_unguarded)
        return key

    def _keeps(self):
        """Whether kept traces and modes apply (Note [persisted traces] in _persist.py): not for
        npc.explain, nor while compile debugging asks for the dumps a trace writes."""
        return self._trace_cache and not _debugging()

    def _runs_python_every_call(self, why, known):
        """Records `why` the function runs its Python on every call (last_side_effects), and
        logs it (topic "fallback") on a call whose key was not traced before."""
        if why not in self.last_side_effects:
            self.last_side_effects.append(why)
        if not known:
            _logs.log("fallback", "%s: %s", self._name, why)

    def _debug_dump(self, ctx, graph):
        if not _debugging():
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


class _Retrace(_TraceAgain):
    """Trace again with the float arguments at `paths` and the int arguments at `ints` static
    (Note [runtime scalars], Note [runtime ints]); `tentative`: the ints only if that trace
    succeeds."""

    def __init__(self, paths, ints=(), tentative=False, dims=None):
        super().__init__()
        self.paths = paths
        self.ints = set(ints)
        self.tentative = tentative
        self.dims = dims  # after a view of symbolic sizes: (path, axis) of dims to make static


class _PyBackendGraph:
    def __init__(self, graph, run):
        self._g, self._run = graph, run

    def __call__(self, inputs, scalars):
        return self._run(inputs, scalars)

    def __str__(self):
        return str(self._g)


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
