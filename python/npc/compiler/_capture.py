"""Running the user's Python under tracing: float arguments as runtime scalars, array-free
NumPy calls (creation, random draws) captured as graph nodes or host calls, the ndarray
methods patched while tracing (scalar results, masked and scalar read-modify-write), and the
warnings of traced Python.
"""
import contextlib
import functools
import struct
import sys
import threading
import types
import warnings

import numpy as _np
import numpy.random  # noqa: F401  (imported before any patching of numpy functions)

from .. import _core, _interop
from ._breaks import _run_outside
from ._state import _COMPILER_DIR, _NPC_DIR, _epoch, _internal_file, _is_npc, _tls


# ---------------------------------------------------------------- runtime scalars
# Note [runtime scalars] in src/tracer/trace_nodes.cpp: a float argument is traced as a marked NaN.
def _sentinel(k):
    return struct.unpack("<d", struct.pack("<Q", 0x7FF8_5A5A_0000_0000 | (k & 0xFFFFFFFF)))[0]


class _StaticUse(Exception):
    pass


class _TraceAgain(Exception):
    """Base of the compiler's request to trace again (_api._Retrace): the warnings of the
    abandoned trace are dropped, the new trace shows its own (Note [warnings of traced Python])."""


# Exceptions after which the operations recorded so far are not run (an error of a segment
# run itself, a retrace): see the exception handling of _trace_once.
_NO_FLUSH = (FloatingPointError, Warning, _StaticUse, _core._StaticScalar, _core._StaticShape, _core._GraphBreak)


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


class _RuntimeInt:
    """An int argument traced as a runtime scalar (Note [runtime ints] in
    src/tracer/trace_nodes.cpp): a proxy, not an int subclass, holding the real value `_v`, so
    that CPython and NumPy ask it for its value through a method (__index__, __int__, ...)
    instead of reading an int's digits. Every such use, and every use of it as a Python value
    (arithmetic or comparisons with anything but an npc array, hashing, formatting, attributes
    of int), records the use in `_uses` and then acts as the int itself: the trace goes on with
    the right value and the argument is traced again static afterwards. Operands of npc's
    ufuncs (``a * k``, ``np.maximum(a, k)``, ``a < k``) are its runtime uses. ``isinstance(k,
    int)`` holds (``__class__``); ``type(k) is int`` does not (a documented difference)."""
    __slots__ = ("_v", "_k", "_uses")

    def __init__(self, v, k, uses):
        self._v = v
        self._k = k
        self._uses = uses

    @property
    def __class__(self):
        return int

    def _static(self):
        self._uses.add(self._k)
        return self._v

    def __getattr__(self, name):  # bit_length, to_bytes, numerator, real...
        if name.startswith("_") and name not in ("__doc__",):
            raise AttributeError(name)
        return getattr(self._static(), name)


def _int_binary(name, reflected):
    import operator
    base = name.replace("__r", "__", 1) if reflected else name
    fn = {"__divmod__": divmod, "__pow__": pow}.get(base) or getattr(operator, base)

    def op(self, other, *rest):
        if isinstance(other, _core.ndarray) and _core._is_traced(other):
            return NotImplemented  # the array's operator: a runtime operand
        v = self._static()
        if type(other) is _RuntimeInt:
            other = other._static()
        return fn(other, v, *rest) if reflected else fn(v, other, *rest)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift", "rshift", "and",
              "or", "xor", "matmul"):
    setattr(_RuntimeInt, f"__{_name}__", _int_binary(f"__{_name}__", False))
    setattr(_RuntimeInt, f"__r{_name}__", _int_binary(f"__r{_name}__", True))
for _name, _refl in (("lt", "gt"), ("le", "ge"), ("gt", "lt"), ("ge", "le"), ("eq", "eq"), ("ne", "ne")):
    setattr(_RuntimeInt, f"__{_name}__", _int_binary(f"__{_name}__", False))


def _int_unary(name):
    def op(self, *args):
        v = self._static()
        return getattr(v, name)(*args)
    op.__name__ = name
    return op


for _name in ("__neg__", "__pos__", "__abs__", "__invert__", "__bool__", "__int__", "__index__", "__float__",
              "__complex__", "__round__", "__trunc__", "__floor__", "__ceil__", "__hash__", "__repr__", "__str__",
              "__format__", "__reduce__", "__reduce_ex__", "__getnewargs__", "__sizeof__"):
    setattr(_RuntimeInt, _name, _int_unary(_name))
_RuntimeInt.__copy__ = lambda self: self._static()
_RuntimeInt.__deepcopy__ = lambda self, memo: self._static()
_core._set_runtime_int_type(_RuntimeInt)
_interop._add_runtime_scalar_type(_RuntimeInt)


# Note [numpy.random's own numpy]
# The Cython code of numpy.random (Generator's and RandomState's methods, their bit
# generators) makes its output arrays with `np.empty(...)` from its module's `np`, numpy
# itself, and takes them as numpy.ndarray without a check. No Python frame of its own stands
# between a draw the user's code calls and that np.empty, so a patched np.empty took the
# call for the user's and returned a traced array: Generator.gumbel, numpy.random.chisquare
# or a global Generator's draws crashed the process. While the patches are in, those modules'
# `np` is a stand-in whose attributes are numpy's as they were before the patches.
class _NumpyOriginals(types.ModuleType):
    def __init__(self, originals):
        super().__init__("numpy")
        self.__dict__["_originals"] = originals

    def __getattr__(self, name):
        o = self.__dict__["_originals"].get(name)
        return o if o is not None else getattr(_np, name)


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
        # The trace called a NumPy function that treats arrays that are not numpy.ndarray
        # otherwise (Note [shuffles of traced arrays]): no "npc" eager mode for the function.
        self.numpy_only_calls = False

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
                    shape, value, dtype, order = value_of(*args, **kwargs)
                    code = _code(dtype)
                except _Unsupported:
                    code = None
                if code is None or order not in ("C", "F", "c", "f"):
                    return orig(*args, **kwargs)
                # numpy.full's copyto conversion (Note [Python ints into arrays] in _array.py).
                from .._array import _check_python_int
                from .._dtypes import DTYPES
                value = _check_python_int(value, DTYPES[code], setter=False)
                sidx = -1
                if isinstance(value, _RuntimeFloat):
                    sidx = _sentinel_index(value)
                    value = 0.0
                if order in ("F", "f"):
                    # F order: the fill over the reversed shape, traced as its transpose.
                    try:
                        dims = tuple(shape)
                    except TypeError:
                        dims = (shape,)
                    r = p.ctx.fill(dims[::-1], value, code, sidx).transpose()
                else:
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
                            rest.get("order", "K") in ("K", "A", "C", "F") and rest.get("subok", True) is True and \
                            set(rest) <= {"order", "subok", "shape", "device"} and \
                            rest.get("device") in (None, "cpu") and \
                            isinstance(value, (bool, int, float, complex, _np.generic)):
                        code = proto._code if dtype is None else _code(dtype)
                        if code is not None:
                            # copyto's conversion (Note [Python ints into arrays] in _array.py).
                            from .._array import _check_python_int
                            from .._dtypes import DTYPES
                            value = _check_python_int(value, DTYPES[code], setter=False)
                            sidx = -1
                            if isinstance(value, _RuntimeFloat):
                                sidx = _sentinel_index(value)
                                value = 0.0
                            r = p.ctx.fill_like(proto, value, code, sidx, rest.get("order", "K"))
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
                if _any_traced(args, kwargs):
                    # Note [draws of traced parameters]
                    return _run_outside(orig, f"{label}.{orig.__name__} of traced arrays", args, kwargs)
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
    def _shuffle_maker(orig):
        # numpy.random.shuffle (the global RandomState) of a traced array: Note [shuffles of
        # traced arrays].
        @functools.wraps(orig)
        def patched(x, *args, **kwargs):
            p = _Patches._current()
            if p is None or args or kwargs:
                return orig(x, *args, **kwargs)
            if not (_is_npc(x) and _core._is_traced(x)):
                # A NumPy array or list made by the traced code: shuffled on every call.
                return _run_outside(orig, "numpy.random.shuffle of an untraced object", (x,), {})
            rand = _np.random.mtrand._rand
            return _shuffled_in_place(x, 0, lambda n: _host_call(p.ctx, lambda: _np.asarray(rand.permutation(n)),
                                                                    "numpy.random.shuffle", _GlobalState()))
        return patched

    @staticmethod
    def _eye_maker(label):
        # Note [traced eye]
        # numpy.eye/identity inside a compiled function: (j - i == k) over two Iota nodes,
        # cast to the dtype, so `z * np.eye(n) - A` is one fused kernel that never stores the
        # identity (as a host call, NumPy made an n x n array on every trace and every replay).
        # Other arguments (like=, a device, sizes NumPy rejects, dtypes npc lacks) keep the host
        # call.
        def make(orig):
            host = _Patches._host_maker(label, lambda: None)(orig)

            @functools.wraps(orig)
            def patched(*args, **kwargs):
                p = _Patches._current()
                if p is None:
                    return orig(*args, **kwargs)
                try:
                    n, m, k, dtype, order = _eye_args(orig.__name__, *args, **kwargs)
                    code = _code(dtype)
                except (_Unsupported, TypeError):
                    code = None
                if code is None:
                    return host(*args, **kwargs)
                from .._dtypes import DTYPES
                i = p.ctx.iota(n, _code(_np.int64))
                j = p.ctx.iota(m, _code(_np.int64))
                if order in ("F", "f"):  # the transpose of a C-ordered (M, N) array, as fills
                    return ((j[:, None] - i[None, :]) == k).astype(DTYPES[code]).T
                return ((j[None, :] - i[:, None]) == k).astype(DTYPES[code])
            return patched
        return make

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
            P._patch(mod, "zeros", P._fill_maker(lambda shape, dtype=float, order="C", **k: (shape, 0, dtype, order)))
            P._patch(mod, "ones", P._fill_maker(lambda shape, dtype=None, order="C", **k: (shape, 1, dtype, order)))
            P._patch(mod, "empty", P._fill_maker(lambda shape, dtype=float, order="C", **k: (shape, 0, dtype, order)))
            P._patch(mod, "full", P._fill_maker(_full_args))
            P._patch(mod, "zeros_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 0, dtype, k)))
            P._patch(mod, "ones_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 1, dtype, k)))
            P._patch(mod, "empty_like", P._fill_like_maker(lambda a, dtype=None, **k: (a, 0, dtype, k)))
            P._patch(mod, "full_like", P._fill_like_maker(
                lambda a, fill_value, dtype=None, **k: (a, fill_value, dtype, k)))
        for name in ("ascontiguousarray", "asfortranarray"):
            P._patch(_np, name, P._layout_maker)
        for mod in (_np, npc):
            for name in ("arange", "linspace", "logspace", "geomspace", "tri"):
                P._patch(mod, name, P._host_maker(mod.__name__, lambda: None))
            for name in ("eye", "identity"):
                P._patch(mod, name, P._eye_maker(mod.__name__))
        glob = lambda: _GlobalState()  # noqa: E731
        # Every function of numpy.random's global RandomState (rand, normal, chisquare, ...).
        rs = _np.random.mtrand._rand
        for name in dir(_np.random):
            f = getattr(_np.random, name, None)
            if getattr(f, "__self__", None) is rs and not name.startswith("_") and \
                    name not in ("seed", "get_state", "set_state", "shuffle"):
                P._patch(_np.random, name, P._host_maker("numpy.random", glob))
        P._patch(_np.random, "default_rng", P._rng_maker)
        P._patch(_np.random, "shuffle", P._shuffle_maker)
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
        # Note [numpy.random's own numpy]: last, so that it sees every original.
        originals = {n: o for m, n, o in P._saved if m is _np}
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("numpy.random.") and getattr(mod, "np", None) is _np:
                P._patch(mod, "np", lambda orig: _NumpyOriginals(originals))
        import builtins
        P._patch(builtins, "print", P._print_maker)
        for name in _SCALAR_METHODS:
            P._patch(_core.ndarray, name, _scalar_method_maker)
        # Subscripts are not patched: the C++ slots call _traced_getitem/_traced_setitem
        # (Note [subscripts while tracing] in python/npc/csrc/bind_indexing.cpp).

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


# ---------------------------------------------------------------- ndarray methods while tracing
# Note [scalar results] in src/tracer/trace.hpp: a method of a NumPy scalar returns a scalar
# where the ndarray method returns a 0-d array (NumPy runs the method on a 0-d array and
# unwraps the result). While tracing, such a method of a traced 0-d value that eager code
# would have returned as a scalar marks its 0-d result as one too. The operators (`-s`,
# `abs(s)`, `s + 1`) mark theirs in C++ and are never patched: Note [operator slots are
# never patched] in python/npc/csrc/bind_ops.cpp.
_SCALAR_METHODS = ("astype", "copy", "reshape", "round", "conj", "conjugate", "clip", "squeeze",
                   "transpose", "view", "byteswap", "flatten", "ravel")


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


def _code_sites(code):
    """(code, offsets of augmented subscripts, whether npc's or NumPy's file) of `code`."""
    # Keyed by the code object's id (hashing a code object hashes its contents): the entry
    # holds the code object, so the id is not reused while the entry lives.
    entry = _rmw_sites.get(id(code))
    if entry is not None and entry[0] is code:
        return entry
    import dis
    ins = list(dis.get_instructions(code))
    sites = set()
    for k in range(2, len(ins) - 1):
        if ins[k].opname == "BINARY_SUBSCR" and all(
                ins[k - j].opname == "COPY" and ins[k - j].arg == 2 for j in (1, 2)):
            # f_lasti may point into the instruction's inline cache once it is specialised.
            sites.update(range(ins[k].offset, ins[k + 1].offset))
    entry = _rmw_sites[id(code)] = (code, sites, _internal_file(code.co_filename))
    return entry


def _is_augmented_subscript(frame):
    return frame.f_lasti in _code_sites(frame.f_code)[1]


def _bool_mask(key):
    if isinstance(key, (_core.ndarray, _np.ndarray)) and key.dtype == _np.bool_ and key.ndim >= 1:
        return key
    return None


_plain_getitem = _core._plain_getitem
_plain_setitem = _core._plain_setitem


def _traced_getitem(self, key):
    """self[key] while this thread traces, for the keys the C++ slot does not take itself
    (Note [subscripts while tracing] in python/npc/csrc/bind_indexing.cpp): boolean masks,
    NumPy integer keys, lists and arrays."""
    if _tls.patches is None:
        return _plain_getitem(self, key)
    tk = type(key)
    if tk is tuple or tk is int:
        if _scalar_key(key, self.ndim) and _core._is_traced(self):
            frame = sys._getframe(1)
            site = _code_sites(frame.f_code)
            if not site[2]:
                # Note [traced scalar elements]: the binding's element read of a traced
                # array is already a copy marked as a NumPy scalar (Note [scalar results]).
                r = _plain_getitem(self, key)
                return _ScalarRMW(r) if frame.f_lasti in site[1] else r
        return _plain_getitem(self, key)
    m = _bool_mask(key)
    if m is not None and m.ndim <= self.ndim and tuple(m.shape) == tuple(self.shape[:m.ndim]) and \
            (_core._is_traced(self) or (_is_npc(m) and _core._is_traced(m))) and \
            _is_augmented_subscript(sys._getframe(1)):
        return _MaskedRMW(self, m, _plain_getitem)
    if _scalar_key(key, self.ndim) and _core._is_traced(self) and \
            not _internal_file(sys._getframe(1).f_code.co_filename):
        # Note [traced scalar elements]
        r = _plain_getitem(self, key)
        return _ScalarRMW(r) if _is_augmented_subscript(sys._getframe(1)) else r.copy()
    return _plain_getitem(self, key)


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
        if type(k) is not int and (isinstance(k, (bool, _np.bool_)) or not isinstance(k, (int, _np.integer))):
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


def _traced_setitem(self, key, value):
    """self[key] = value while this thread traces, for a _MaskedResult value (Note [masked
    read-modify-write]; Note [subscripts while tracing] in python/npc/csrc/bind_indexing.cpp)."""
    if type(value) is _MaskedResult and value.base is self and value.mask is key:
        import npc
        m = value.mask
        mb = npc.reshape(m, tuple(m.shape) + (1,) * (self.ndim - m.ndim))
        return _plain_setitem(self, Ellipsis, npc.where(mb, value.full, self))
    return _plain_setitem(self, key, value)


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
_core._set_subscript_hooks(_code_sites, _ScalarRMW, _traced_getitem, _traced_setitem, _MaskedResult)


# ---------------------------------------------------------------- fills and host calls
class _Unsupported(Exception):
    pass


def _full_args(shape, fill_value, dtype=None, order="C", **k):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _np.bool_
        elif isinstance(fill_value, int):
            dtype = _np.asarray(fill_value).dtype  # int64; uint64 from 2**63, object past 2**64
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
    return shape, fill_value, dtype, order


def _eye_args(name, *args, **kwargs):
    """(N, M, k, dtype, order) of a numpy.eye or numpy.identity call that Note [traced eye] traces;
    _Unsupported for any other (the host call then runs NumPy's own, errors included)."""
    import operator
    if name == "identity":
        def parse(n, dtype=None, *, like=None):
            return n, n, 0, dtype, "C", None, like
    else:
        def parse(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
            return N, N if M is None else M, k, dtype, order, device, like
    n, m, k, dtype, order, device, like = parse(*args, **kwargs)
    if like is not None or device not in (None, "cpu") or order not in ("C", "F", "c", "f"):
        raise _Unsupported()
    if any(isinstance(v, (bool, _np.bool_)) for v in (n, m, k)):
        raise _Unsupported()
    n, m, k = operator.index(n), operator.index(m), operator.index(k)
    if not (0 <= n < 2**31 and 0 <= m < 2**31 and n * m <= 2**32):
        raise _Unsupported()  # NumPy's own call: its errors for sizes it rejects or cannot allocate
    if n * m < n + m:
        raise _Unsupported()  # empty, or one row or column: the indices would outweigh the result
    return n, m, k, dtype, order


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
    if isinstance(example, _np.ndarray) and _code(example.dtype) is None:
        # A dtype npc lacks (np.arange(3, dtype='m8[s]'), np.linspace(0, 1, 5, dtype='>f8')): a
        # graph break that runs NumPy's call on every call (with the random state restored
        # above, a draw is the one the program makes); Note [results of dtypes npc lacks].
        return _run_outside(lambda: thunk(), f"{name} returning dtype {example.dtype}, which npc lacks", (), {})
    from .._array import _as_npc

    def call():
        return _as_npc(_np.asarray(thunk()))
    return ctx.host_call(call, name, _as_npc(_np.asarray(example)))


def _by_name(method, args, kwargs):
    """(args, kwargs) with the arguments bound to `method`'s parameters given by name, or as
    they are when its signature is unknown or does not take them (NumPy raises then)."""
    import inspect
    try:
        bound = inspect.signature(method).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    if any(p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) for p in bound.signature.parameters.values()):
        return args, kwargs
    return (), dict(bound.arguments)


# Note [draws of traced parameters]
# A draw is a host call: drawn once while tracing with the generator's state restored after,
# and again on every replay, in the graph's order. A draw whose parameters are traced values
# (`rng.normal(x, 1)`, `rng.permuted(x)`, `np.random.chisquare(x.sum())`) has no value to draw
# with while tracing: it runs at a graph break instead, NumPy's own call on the concrete
# arrays, after the pending graph (and its draws) ran, so the stream keeps the program's
# order on every call, errors included.
def _any_traced(args, kwargs):
    """Whether a traced npc array is among the arguments (or in a list or tuple of them)."""
    for v in (*args, *kwargs.values()):
        for x in (v if type(v) in (list, tuple) else (v,)):
            if _is_npc(x) and _core._is_traced(x):
                return True
    return False


class _GenProxy:
    """A numpy.random.Generator (or RandomState) inside a compiled function: each draw is a
    host call. A generator created inside the function (default_rng) is re-created on every
    call, as the eager code does; one passed in is used by reference."""

    _DRAWS = ("random", "normal", "uniform", "integers", "standard_normal", "exponential", "poisson",
              "binomial", "choice", "permutation", "beta", "gamma", "standard_exponential", "lognormal")

    def __init__(self, ctx, factory, fresh):
        self._ctx, self._factory, self._fresh = ctx, factory, fresh
        self._gen = factory() if not fresh else None
        self._epoch = None

    @property
    def __class__(self):  # isinstance(g, np.random.Generator) holds, as for the generator
        return type(self._current())

    def _current(self):
        if not self._fresh:
            return self._gen
        if self._epoch != _epoch[0] or self._gen is None:
            self._gen = self._factory()
            self._epoch = _epoch[0]
        return self._gen

    def __getattr__(self, name):
        if name == "shuffle":
            return self._shuffle
        attr = getattr(self._current(), name)
        if name.startswith("_") or name in ("spawn", "bit_generator") or not callable(attr):
            return attr

        def draw(*args, **kwargs):
            if "out" not in kwargs and any(_is_npc(a) and _core._is_traced(a) for a in args):
                args, kwargs = _by_name(attr, args, kwargs)  # out given by position
            out = kwargs.get("out")
            if out is not None and _is_npc(out) and _core._is_traced(out):
                return self._draw_into(name, out, args, kwargs)
            if _any_traced(args, kwargs):
                # Note [draws of traced parameters]
                return _run_outside(lambda *a, **k: getattr(self._current(), name)(*a, **k),
                                    f"Generator.{name} of traced arrays", args, kwargs)
            return _host_call(self._ctx, lambda: getattr(self._current(), name)(*args, **kwargs),
                              f"Generator.{name}", _LazyGenState(self))
        return draw

    # Note [draws into traced arrays]
    # NumPy's Generator fills `out=` only when it is a numpy.ndarray (of the draw's dtype,
    # C- or F-contiguous, aligned, writable); a traced array is not one. The draw is a host call
    # that fills a fresh NumPy array of out's shape, dtype, layout and writability (so NumPy
    # checks it and raises as it would for out), and its value is then stored into out, which
    # the call returns as NumPy's does.
    def _draw_into(self, name, out, args, kwargs):
        shape, dtype, flags = out.shape, out.dtype, out.flags
        order = "C" if flags.c_contiguous else "F" if flags.f_contiguous else None
        writeable = flags.writeable

        def fresh():
            a = _np.empty(shape, dtype, order=order or "C")
            if order is None:  # a strided array, as NumPy would refuse
                a = _np.empty(tuple(shape) + (2,), dtype)[..., 0]
            a.flags.writeable = writeable
            return a

        def call():
            a = fresh()
            getattr(self._current(), name)(*args, **dict(kwargs, out=a))
            return a
        value = _host_call(self._ctx, call, f"Generator.{name}", _LazyGenState(self))
        out[...] = value
        return out


    def _shuffle(self, x, axis=0):
        if not (_is_npc(x) and _core._is_traced(x)):
            # A NumPy array or list made by the traced code: shuffled on every call.
            return _run_outside(lambda: self._current().shuffle(x, axis=axis), "Generator.shuffle of an untraced object",
                                (), {})
        return _shuffled_in_place(x, axis, self.permutation)


# Note [shuffles of traced arrays]
# NumPy's shuffle (Generator.shuffle, numpy.random.shuffle) swaps the rows of a numpy.ndarray
# in its own buffer; any other object it treats as a Python sequence, swapping items with
# `x[i], x[j] = x[j], x[i]`, which for an array of views (an npc array's rows) copies one
# row over the other and loses it (NumPy warns "you are shuffling a 'ndarray' object which
# is not a subclass of 'Sequence'"). A traced array is shuffled as NumPy shuffles an ndarray:
# the generator draws permutation(n) (a host call, drawn again on each replay), which moves
# its state as the shuffle of n rows does and orders arange(n) as that shuffle orders the
# rows, and the array is overwritten with its rows taken in that order. The function is then
# never run in the "npc" eager mode (Note [eager npc calls] in _convert.py), where NumPy's
# shuffle would get npc views.
def _shuffled_in_place(x, axis, permutation):
    from numpy.lib.array_utils import normalize_axis_index
    import npc
    if x.ndim == 0:
        raise TypeError("len() of unsized object")  # NumPy's, whatever the axis
    axis = normalize_axis_index(axis, x.ndim)
    if _tls.patches is not None:
        _tls.patches.numpy_only_calls = True
    if not x.flags.writeable:
        raise ValueError("array is read-only")
    if x.size == 0:
        return  # NumPy draws nothing
    perm = permutation(x.shape[axis])
    x[...] = npc.take(x, perm, axis=axis)


class _LazyGenState:
    def __init__(self, proxy):
        self.proxy = proxy

    def save(self):
        g = self.proxy._current()
        return g.get_state() if isinstance(g, _np.random.RandomState) else g.bit_generator.state

    def restore(self, st):
        g = self.proxy._current()
        if isinstance(g, _np.random.RandomState):
            g.set_state(st)
        else:
            g.bit_generator.state = st


# ---------------------------------------------------------------- warnings of traced Python
# Note [warnings of traced Python]
# Warnings the function's Python raises while it is traced (NumPy's and npc's Python-level
# ones: ComplexWarning of astype, "Mean of empty slice", "Degrees of freedom <= 0", the
# RuntimeWarnings of eager ops on concrete values) are recorded through the caller's filters
# and shown again right after the traced call returns or raises (their order among
# themselves and the segments' floating-point warnings is kept). A graph without breaks
# replays without running the Python, so its entry keeps them and shows them on every
# replay, before the graph's own floating-point warnings, under the filters then in effect.
# The floating-point errors of the segments that ran while tracing (a trace cut at the node
# budget, Note [loops] in src/tracer/trace_segments.cpp) are not the Python's: the replay
# runs the same segments, which report their errors for the values of that call. They are
# recorded marked (npc._errstate.report_compiled) and shown on the tracing call only:
# `_python_warnings` leaves them out of what an entry keeps.
class _Recorded(list):
    """The warnings of a trace; `deferred`: not shown yet (the trace ended without an
    exception, and checks after it may still trace again: _show_deferred shows them)."""
    deferred = False


@contextlib.contextmanager
def _recording_warnings():
    from .._errstate import marking_compiled
    recorded = _Recorded()
    retrace = False
    ok = False
    try:
        with warnings.catch_warnings(record=True) as rec, marking_compiled(rec):
            try:
                yield recorded
                ok = True
            except (_StaticUse, _core._StaticScalar, _core._StaticShape, _TraceAgain):
                # Traced again (a runtime int made static after an exception too): the
                # warnings come from that trace.
                retrace = True
                raise
            finally:
                recorded.extend((w.message, w.category, w.filename, w.lineno, getattr(w, "_npc_compiled", False))
                                for w in rec)
    finally:
        if ok:
            recorded.deferred = True
        elif not retrace:
            _replay_warnings(recorded, False)


def _show_deferred(recorded):
    """Shows the warnings of a trace that ended normally (once)."""
    if getattr(recorded, "deferred", False):
        recorded.deferred = False
        _replay_warnings(recorded, False)


def _python_warnings(recorded):
    """The warnings of the traced Python among `recorded` (those a replay shows again)."""
    return [w for w in recorded if not w[4]]


def _replay_warnings(recorded, replay):
    for message, category, filename, lineno, _ in recorded:
        # On replays, once-per-location filters behave as for the same code run eagerly.
        registry = _registry_of(filename) if replay else None
        warnings.warn_explicit(message, category, filename, lineno, registry=registry)


@functools.lru_cache(maxsize=256)
def _registry_of(filename):
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) == filename:
            return mod.__dict__.setdefault("__warningregistry__", {})
    return None
