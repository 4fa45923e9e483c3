"""ufunc objects and array operators (numpy.ufunc, numpy.add, ndarray.__add__, ...).

Every ufunc is an :class:`ufunc` object built from a row of the op table
(``include/npc/ops.def``); calls reach C++ through one generic binding
(``_core.ufunc_call``). ndarray's operators come from the table's dunders column. The
reductions (sum, max, cumsum, ...) are in _reductions.py, the composite functions (where,
clip, round, isclose, ...) in _composites.py and the statistics in _statistics.py. Anything
with a non-native dtype runs on NumPy (npc._fallback).
"""
import builtins
import operator as _operator
import warnings

import numpy as _np

from . import _core
from . import _fallback
from ._array import (_as_npc, _check_scalar_out, _from_numpy, _scalar_result, _subclass_wrapper, _wrap_result,
                     _wrap_ufunc_result, ndarray)
from ._dtypes import DTYPES, code_of

_NOT_NATIVE = object()  # returned by the bindings when an operand is not native to npc
_call_simple = _core.ufunc_call_simple
_CASTING = {"no": 0, "equiv": 1, "safe": 2, "same_kind": 3, "unsafe": 4}
_IDENTITY = {0: None, 1: 0, 2: 1, 3: -1, 4: True, 5: False, 6: -_np.inf, 7: None}  # 7: reorderable, none

# ---------------------------------------------------------------- floating-point errors
# One implementation for every layer (called by the bindings with the flags and the op name).
from ._errstate import report as _fp_error  # noqa: E402
from . import _errstate  # noqa: E402


# ---------------------------------------------------------------- the op table
# Rows of include/npc/ops.def as named tuples (name, nin, ..., resolver, at, dunders, ...).
_TABLE = _core.op_table()
_OP_ID = {row.name: i for i, row in enumerate(_TABLE)}


def _to_numpy(x):
    return _fallback.to_numpy(x)


def _casting_code(casting):
    if not isinstance(casting, str):
        raise TypeError(f"casting must be str, not {type(casting).__name__}")
    try:
        return _CASTING[casting]
    except KeyError:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' "
                         f"(got '{casting}')") from None


def _ufunc_by_name(name):
    """Unpickles an npc ufunc (pickled by name, as NumPy pickles its ufuncs)."""
    import npc
    return getattr(npc, name)


class ufunc(_core._UfuncBase):
    """numpy.ufunc for npc arrays: elementwise op with broadcasting, NEP 50 promotion and
    the keywords ``out``, ``where``, ``dtype``, ``casting``, ``order``.

    Methods ``reduce``, ``accumulate``, ``outer`` and ``at`` mirror NumPy's. Attributes
    ``nin``, ``nout``, ``nargs``, ``identity``, ``types``, ``signature``, ``ntypes`` and
    ``__name__`` are NumPy's values for the same ufunc. Operands that are not native to npc
    (object, string, datetime dtypes) run on NumPy.
    """

    def __init__(self, name, op=None):
        row = _TABLE[_OP_ID[op or name]]
        self._id = _OP_ID[op or name]
        self.__name__ = name
        self.nin = row[2]
        self.nout = row[3]
        self.nargs = self.nin + self.nout
        self.identity = _IDENTITY[row[4]]
        self._np = getattr(_np, name)
        self.types = list(self._np.types)
        self.ntypes = len(self.types)
        self.signature = None
        self.__doc__ = self._np.__doc__
        self.__qualname__ = name
        # A call without keywords runs in C++ (_core._UfuncBase); the rest in _call below.
        self._bind(self._id, self.nin)

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def __reduce__(self):
        return (_ufunc_by_name, (self.__name__,))

    def _fallback(self, method, args, kwargs):
        _fallback.record(f"{self.__name__}.{method}" if method != "__call__" else self.__name__)
        fn = self._np if method == "__call__" else getattr(self._np, method)
        out = kwargs.get("out")
        if out is not None:
            # NumPy returns the `out` it wrote: hand back the caller's objects (a NumPy
            # destination stays the caller's NumPy array, not an npc view of it).
            np_kwargs = _to_numpy(kwargs)
            return _fallback._restore_outputs(fn(*_to_numpy(args), **np_kwargs), out, np_kwargs["out"])
        return _fallback.from_numpy(fn(*_to_numpy(args), **_to_numpy(kwargs)))

    def _call(self, *args, out=_np._NoValue, where=True, dtype=None, casting="same_kind", order="K",
              subok=True, signature=None, **kwargs):
        """ufunc.__call__ with keywords (the keyword-free call never gets here)."""
        nin = self.nin
        if len(args) == nin and (out is None or out is _np._NoValue) and where is True and dtype is None and \
                casting == "same_kind" and order == "K" and signature is None and not kwargs:
            r = _call_simple(self._id, args)
            if r is _NOT_NATIVE:
                return self._fallback("__call__", args, {})
            return r
        return self._call_slow(args, out, where, dtype, casting, order, signature, kwargs)

    def _call_slow(self, args, out, where, dtype, casting, order, signature, kwargs):
        nin, nout = self.nin, self.nout
        out_given = out is not _np._NoValue or len(args) > nin  # even out=None (no where= warning)
        if out is _np._NoValue:
            out = None
        kw = dict(kwargs)
        if len(args) > nin:
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            out = args[nin:]
            args = args[:nin]
            if len(out) > nout:
                raise TypeError(f"{self.__name__}() takes from {nin} to {nin + nout} positional arguments "
                                f"but {len(args) + len(out)} were given")  # more than 1
            if len(out) < nout:
                out = tuple(out) + (None,) * (nout - len(out))
        if len(args) < nin:
            raise TypeError(f"{self.__name__}() takes from {nin} to {nin + nout} positional arguments "
                            f"but {len(args)} {'was' if len(args) == 1 else 'were'} given")
        _check_scalar_out(out)  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
        full_kw = dict(out=out, where=where, dtype=dtype, casting=casting, order=order, **kw)
        if signature is not None or kw:
            if signature is not None:
                full_kw["signature"] = signature
            return self._fallback("__call__", args, {k: v for k, v in full_kw.items() if v is not None})
        if out is not None:
            if not isinstance(out, tuple):
                if nout > 1 or isinstance(out, list):
                    raise TypeError("'out' must be a tuple of arrays")
                out = (out,)
            if len(out) != nout:
                raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
            if builtins.all(o is None for o in out):
                out = None
            elif builtins.any(o is not None and not isinstance(o, ndarray) for o in out):
                return self._fallback("__call__", args, {k: v for k, v in full_kw.items() if v is not None})
        code = -1
        if dtype is not None:
            code = code_of(dtype)
            if code is None:
                return self._fallback("__call__", args, {k: v for k, v in full_kw.items() if v is not None})
        if order is None:  # NumPy reads order=None as 'K'
            order = "K"
        if not isinstance(order, str) or order.upper() not in ("C", "F", "A", "K"):
            raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
        w = None if where is True else where
        if w is not None:
            # NumPy casts an array `where` to bool under 'safe' casting, and warns when the
            # masked lanes of a new output are left uninitialised.
            wd = getattr(w, "dtype", None)
            if isinstance(w, (ndarray, _np.ndarray)) and wd != _np.bool_:
                raise TypeError(f"Cannot cast array data from {wd!r} to dtype('bool') according to the rule 'safe'")
            if not out_given:
                warnings.warn("'where' used without 'out', expect uninitialized memory in output. "
                              "If this is intentional, use out=None.", UserWarning, stacklevel=3)
        r = _core.ufunc_call(self._id, args, out, w, code, _casting_code(casting), order.upper())
        if r is _NOT_NATIVE:
            return self._fallback("__call__", args, {k: v for k, v in full_kw.items() if v is not None})
        if out is None:
            # Subclass operands wrap the result (Note [ndarray subclasses] in _array.py).
            for x in args:
                if isinstance(x, ndarray) and type(x) is not ndarray:
                    return _wrap_ufunc_result(r, args)
        return r

    # ------------------------------------------------------------ methods
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_np._NoValue,
               where=True):
        """numpy.ufunc.reduce: reduces `array` along `axis` (int, tuple or None)."""
        r = _reduce(self, array, axis, dtype, out, keepdims, initial, where)
        return _method_result(r, (array,), out, True)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """numpy.ufunc.accumulate: running reduction along `axis`; same shape as `array`."""
        if self.nin != 2:
            raise ValueError("accumulate only supported for binary functions")
        if self.nout != 1:
            raise ValueError("accumulate only supported for functions returning a single value")
        _check_scalar_out(out)  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
        a = _as_npc(array)
        if not isinstance(a, ndarray) or (dtype is not None and code_of(dtype) is None) or \
                (out is not None and not isinstance(out, ndarray)):
            return self._fallback("accumulate", (array,), dict(axis=axis, dtype=dtype, out=out))
        if isinstance(out, tuple):
            out = out[0]
        if axis is None or isinstance(axis, tuple):
            # NumPy takes axis=None as every axis and a tuple as its axes: one is allowed.
            axes = tuple(range(a.ndim)) if axis is None else axis
            if len(axes) != 1:
                if a.ndim == 0:
                    raise TypeError("cannot accumulate on a scalar")
                raise ValueError("accumulate does not allow multiple axes")
            axis = axes[0]
        if (a.dtype.kind == "c" or (dtype is not None and _np.dtype(dtype).kind == "c") or
                (isinstance(out, ndarray) and out.dtype.kind == "c")) and \
                _TABLE[self._id].resolver != "Logical":  # (bool loops)
            _check_reduce_loop(self, a, dtype, out, accumulate=True)
            _warn_complex_casts(a, dtype, out, reduce=False)
        r = _core.ufunc_accumulate(self._id, a, _operator.index(axis), -1 if dtype is None else code_of(dtype), out)
        return _method_result(r, (array,), out)

    def outer(self, A, B, /, **kwargs):
        """numpy.ufunc.outer: op(a[i...], b[j...]) over all pairs; shape a.shape + b.shape."""
        if self.nin != 2:
            raise ValueError("outer product only supported for binary functions")
        # NumPy's outer takes numpy.asarray of both operands: a Python scalar is a strong
        # array there (add.outer(int8 array, 3) is int64), not a weak NEP 50 scalar.
        A = _as_npc(A) if type(A) in (int, float, complex, bool, list, tuple) else A
        B = _as_npc(B) if type(B) in (int, float, complex, bool, list, tuple) else B
        dtype = kwargs.pop("dtype", None)
        if dtype is not None and code_of(dtype) is None:
            return self._fallback("outer", (A, B), dict(kwargs, dtype=dtype))
        if kwargs:
            # out=, where=, casting=, order=: the call on A[..., None, ...] and B.
            a, b = _as_npc(A), _as_npc(B)
            if not (isinstance(a, ndarray) and isinstance(b, ndarray) and a.dtype.kind in "?biufc" and
                    b.dtype.kind in "?biufc"):
                return self._fallback("outer", (A, B), dict(kwargs, dtype=dtype))
            return self(a.reshape(a.shape + (1,) * b.ndim), b, dtype=dtype, **kwargs)
        r = _core.ufunc_outer(self._id, A, B, -1 if dtype is None else code_of(dtype))
        if r is _NOT_NATIVE:
            r = self._fallback("outer", (A, B), {})
        return _method_result(r, (A, B), None)

    def at(self, a, indices, b=None, /):
        """numpy.ufunc.at: unbuffered in-place op on `a[indices]` (repeated indices
        accumulate). `a` may be any writeable view (strided, transposed, negative strides);
        `indices` is anything a[indices] accepts (integers, slices, tuples, integer and
        boolean arrays, Ellipsis); `b` broadcasts to the shape of a[indices]."""
        if _scalar_result(a):  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
            raise TypeError("first operand must be array")
        if not isinstance(a, ndarray):
            return self._fallback("at", (a, indices) + (() if b is None else (b,)), {})
        if self.nout != 1:
            raise ValueError("Only single output ufuncs supported at this time")
        if self.nin == 2 and b is None:
            raise ValueError("second operand needed for ufunc")
        if self.nin == 1 and b is not None:
            raise ValueError("second operand provided when ufunc is unary")
        if not a.flags.writeable:
            raise ValueError("array to perform in place operation on is read-only")
        # C-order positions of the selected elements (the kernel maps them to offsets in any
        # view: Note [ufunc.at targets] in src/ops/ufunc_at.cpp).
        pos = _np.arange(a.size, dtype=_np.int64).reshape(a.shape)
        sel = _np.asarray(pos[_to_numpy(indices)])
        idx = sel.ravel()
        if b is not None:
            # NumPy's ufunc.at converts the values to an array first: a Python scalar is not
            # weak there (np.add.at(uint8_array, i, -3) runs the int64 loop, complex64 / 1.5
            # the complex128 one), and each result is cast back into `a` unsafely.
            bb = b_given = _np.asarray(_to_numpy(b))
            if bb.dtype.kind not in "biufc":
                # Values npc has no loop for (strings, objects, ints beyond 64 bits): NumPy's
                # own ufunc.at on a copy raises its error, or gives the values to store.
                tmp = _np.array(_to_numpy(a))
                getattr(_np, self.__name__).at(tmp, _to_numpy(indices), _to_numpy(b))
                _core._copy_into(a, _from_numpy(tmp))
                return
            try:
                bb = _np.broadcast_to(bb, sel.shape).ravel()
            except ValueError:
                # NumPy resolves the loop first: a ufunc without one raises its no-loop error.
                _core.resolve_loop(self._id, [code_of(a.dtype), code_of(bb.dtype)], [False, False], -1)
                raise ValueError("array is not broadcastable to correct shape") from None
            b = _from_numpy(_np.ascontiguousarray(bb))
        flags = _core.ufunc_at(self._id, a, _from_numpy(_np.ascontiguousarray(idx)), b)
        if b is not None and b.dtype.kind == "c" and a.dtype.kind not in "cb" and _at_drops_imag(self, a, b):
            warnings.warn("Casting complex values to real discards the imaginary part", _np.exceptions.ComplexWarning,
                          stacklevel=2)
        if idx.size == 0:
            return
        indexed = _at_indexed_loop(self, a, indices, sel.size, None if b is None else b_given)
        if indexed and a.dtype.char in "fd" and _at_nan_is_invalid(self) and \
                _np.isnan(_to_numpy(a)[_to_numpy(indices)]).any():
            flags |= 8  # the indexed loop's ordered comparison with a NaN raises 'invalid'
        if flags:
            _fp_error(flags, self.__name__ if indexed else "at")

    def reduceat(self, *args, **kwargs):
        r = self._fallback("reduceat", args, kwargs)
        return _method_result(r, args[:1] or (kwargs.get("array"),), kwargs.get("out"))

    def resolve_dtypes(self, *args, **kwargs):
        return self._np.resolve_dtypes(*args, **kwargs)


# Note [ufunc.at error names]: NumPy runs ufunc.at through the ufunc's indexed loop
# (`*_indexed` in loops_*.dispatch.c.src; generate_umath.py's `indexed=`) when there is one
# for the dtype, `a` is 1-d, needs no cast (b has a's dtype too) and the index has an integer
# or array part or selects one element; its floating-point errors are then named after the
# ufunc ("divide by zero encountered in floor_divide"), elsewhere "... in at". The indexed
# maximum/minimum of float32/float64 compare in order, so a NaN raises 'invalid' there (the
# plain loops clear that flag). The kinds with indexed loops are the `at` column of the op table.
def _at_indexed_loop(uf, a, indices, count, b):
    """Whether NumPy's ufunc.at takes the ufunc's indexed loop (Note [ufunc.at error names])."""
    if a.ndim != 1 or a.dtype.kind not in _TABLE[uf._id].at:
        return False
    if b is not None and (b.dtype != a.dtype or b.ndim > 1):
        return False
    if count == 1:
        return True
    parts = indices if isinstance(indices, tuple) else (indices,)
    return builtins.any(not (p is None or p is Ellipsis or isinstance(p, slice)) for p in parts)


_AT_NAN_INVALID = {}


def _at_nan_is_invalid(uf):
    """Whether NumPy's indexed loop of `uf` raises 'invalid' when `a` holds a NaN (the
    ordered comparisons of maximum/minimum; Note [ufunc.at error names]): asked of NumPy once."""
    r = _AT_NAN_INVALID.get(uf._id)
    if r is None:
        r = False
        if "f" in _TABLE[uf._id].at:
            with _np.errstate(all="ignore", invalid="raise"):
                try:
                    uf._np.at(_np.array([_np.nan, 1.0]), [0], 1.0)
                except FloatingPointError:
                    r = True
        _AT_NAN_INVALID[uf._id] = r
    return r


def _at_drops_imag(uf, a, b):
    """Whether ufunc.at of complex values `b` into a real array `a` drops an imaginary part:
    b cast into a real loop, or a complex loop's result cast into `a` (a comparison's bool
    result, a logical loop's bool inputs drop none)."""
    if _TABLE[uf._id].resolver == "Logical":
        return False
    try:
        ins, outs = _core.resolve_loop(uf._id, [code_of(a.dtype), code_of(b.dtype)], [False, False], -1)
    except TypeError:
        return True
    return DTYPES[ins[1]].kind not in "cb" or DTYPES[outs[0]].kind == "c"


def _method_result(r, inputs, out, keep_0d=False):
    """The result of ufunc.reduce/accumulate/outer/reduceat as NumPy gives it for instances of
    Python subclasses of npc.ndarray: wrapped by the subclass operand of highest priority
    (reductions to 0-d too), unless written into `out` (Note [ndarray subclasses])."""
    if out is not None and not (isinstance(out, tuple) and builtins.all(o is None for o in out)):
        return r
    best = _subclass_wrapper(inputs)
    return r if best is None else _wrap_result(r, best, keep_0d)


# Every ufunc row of the op table becomes a module-level ufunc.
_UFUNCS = {}
for _row in _TABLE:
    if _row[1] == 0:
        _UFUNCS[_row[0]] = ufunc(_row[0])
globals().update(_UFUNCS)

# NumPy's aliases (true_divide, mod, abs, conj, acos, pow, bitwise_not, ...): the names of
# NumPy's module whose ufunc is a row of the table under another name.
_ALIASES = sorted(n for n, u in vars(_np).items()
                  if not n.startswith("_") and isinstance(u, _np.ufunc) and u.__name__ != n and u.__name__ in _UFUNCS)
globals().update({n: _UFUNCS[getattr(_np, n).__name__] for n in _ALIASES})


class _RenamedUfunc(ufunc):
    """A NumPy ufunc of its own name that runs another row's loops (numpy.degrees has
    rad2deg's): its errors and warnings name it, as NumPy's do."""

    def __call__(self, *args, **kwargs):
        op = _TABLE[self._id][0]
        with _errstate.renamed(op, self.__name__):
            try:
                return self._call(*args, **kwargs)
            except Exception as e:
                if getattr(e, "ufunc", None) is getattr(_np, op):  # NumPy's _UFunc*Error: str() names e.ufunc
                    e.ufunc = self._np
                e.args = tuple(a.replace(f"ufunc '{op}'", f"ufunc '{self.__name__}'").replace(
                    f"ufunc {op}", f"ufunc {self.__name__}") if isinstance(a, str) else a for a in e.args)
                raise


degrees = _RenamedUfunc("degrees", "rad2deg")  # NumPy's own ufuncs with rad2deg's loops
radians = _RenamedUfunc("radians", "deg2rad")
_ALIASES += ["degrees", "radians"]


# ---------------------------------------------------------------- operators on ndarray
_call = _core.ufunc_call
_SCALAR_TYPES = (int, float, complex, bool)


def _defers(other):
    """NumPy's binop deferral: objects that set __array_ufunc__ = None get NotImplemented."""
    t = type(other)
    if t in _SCALAR_TYPES or t is ndarray:
        return False
    return getattr(t, "__array_ufunc__", 0) is None


def _make_binop(name):
    oid = _OP_ID[name]
    uf = _UFUNCS[name]

    def forward(self, other):
        if _defers(other):
            return NotImplemented
        r = _call(oid, (self, other), None, None, -1, 3, "K")
        if r is _NOT_NATIVE:
            return uf._fallback("__call__", (self, other), {})
        return r

    def reflected(self, other):
        if _defers(other):
            return NotImplemented
        r = _call(oid, (other, self), None, None, -1, 3, "K")
        if r is _NOT_NATIVE:
            return uf._fallback("__call__", (other, self), {})
        return r

    def inplace(self, other):
        if _defers(other):
            return NotImplemented
        r = _call(oid, (self, other), (self,), None, -1, 3, "K")
        if r is _NOT_NATIVE:
            uf._fallback("__call__", (self, other), {"out": (self,)})
        return self

    return forward, reflected, inplace


def _make_unop(name):
    oid = _OP_ID[name]

    def op(self):
        return _call(oid, (self,), None, None, -1, 3, "K")
    return op


def _foreign_operator(op_id, a, b):
    """a <op> b where an operand's type overrides ufuncs (a Dask array, ...): NumPy's ufunc
    lets that type's __array_ufunc__ decide (Note [foreign ufunc overrides], bind_ops.cpp)."""
    return _UFUNCS[_TABLE[op_id][0]]._np(a, b)


def _operator_fallback(op_id, args, out):
    """Operators whose operands are not native to npc run on NumPy (called from C++)."""
    uf = _UFUNCS[_TABLE[op_id][0]]
    return uf._fallback("__call__", args, {} if out is None else {"out": out})


# Note [big Python ints]
# NEP 50 resolves a ufunc's loop without looking at a Python int's value; NumPy converts the
# int to the loop's dtype afterwards. Beyond int64/uint64 that means: a float or complex loop
# gets float(int) (OverflowError "int too large to convert to float" past the float range; a
# float32/float16 loop rounds it, to inf with "overflow encountered in cast"); an integer
# comparison has an exact answer (every element is below 2**70); any other integer loop
# raises OverflowError. The bindings send such calls here.
_CASTING_NAMES = {v: k for k, v in _CASTING.items()}
_COMPARISONS = frozenset(row.name for row in _TABLE if row.resolver == "Comparison")


def _is_big_int(v):
    return type(v) is int and not -2**63 <= v < 2**64


def _loop_codes(op_id, args, dtype):
    codes, weak = [], []
    for v in args:
        if isinstance(v, ndarray):
            codes.append(code_of(v.dtype))
            weak.append(False)
        elif type(v) is int:
            codes.append(code_of(_np.int64))
            weak.append(True)
        elif type(v) is float:
            codes.append(code_of(_np.float64))
            weak.append(True)
        elif type(v) is complex:
            codes.append(code_of(_np.complex128))
            weak.append(True)
        else:
            c = code_of(_np.asarray(_to_numpy(v)).dtype)
            if c is None:
                return None
            codes.append(c)
            weak.append(False)
    return _core.resolve_loop(op_id, codes, weak, dtype)


def _big_int_call(op_id, args, out, where, dtype, casting, order):
    """A ufunc call with a Python int beyond int64/uint64 (Note [big Python ints])."""
    name = _TABLE[op_id][0]
    uf = _UFUNCS[name]
    kw = dict(casting=_CASTING_NAMES[casting], order=order)
    if out is not None:
        kw["out"] = out
    if where is not None:
        kw["where"] = where
    if dtype >= 0:
        kw["dtype"] = DTYPES[dtype]
    loop = _loop_codes(op_id, args, dtype)
    if loop is None or (out is None and where is None and dtype < 0 and
                        builtins.all(type(v) in (int, float, complex, bool) for v in args)):
        # Python scalars only: NumPy makes an object array of the big int, whose loop (a
        # Python-level method, or none: TypeError) decides.
        return uf._fallback("__call__", args, kw)
    big = [i for i, v in enumerate(args) if _is_big_int(v)]
    new = list(args)
    cmp = name in _COMPARISONS and len(big) == 1 and len(args) == 2
    if cmp:
        other = args[1 - big[0]]
        odt = other.dtype if isinstance(other, ndarray) else _np.asarray(_to_numpy(other)).dtype
        if odt.kind == "b":
            raise OverflowError("Python int too large to convert to C long")
        if odt.kind in "fc":
            # NEP 50: the weak int takes the float array's dtype (to inf, with NumPy's cast warning).
            new[big[0]] = odt.type(float(args[big[0]]))
            return uf(*new, **kw)
    for i in big:
        t = DTYPES[loop[0][i]]
        if t.kind in "fc":
            # The value in the loop's dtype (NumPy's "overflow encountered in cast" to float16/32);
            # with every operand in its loop dtype, resolution picks the same loop.
            new[i] = t.type(float(args[i]))
    if builtins.all(DTYPES[loop[0][i]].kind in "fc" for i in big):
        return uf(*new, **kw)
    if cmp:
        i = big[0]
        # Every in-range value is between the big int and zero's far side: the answer is
        # NumPy's for the big int's sign against 0.
        signs = [0, 0]
        signs[i] = 1 if args[i] > 0 else -1
        value = builtins.bool(getattr(_np, name)(*signs))
        other = args[1 - i]
        shape = _np.shape(other) if not isinstance(other, ndarray) else other.shape
        if where is not None:
            shape = _np.broadcast_shapes(shape, _np.shape(where) if not isinstance(where, ndarray) else where.shape)
        r = _from_numpy(_np.full(shape, value))
        if out is not None or where is not None:
            return logical_and(r, True, **{k: v for k, v in kw.items() if k in ("out", "where")})  # noqa: F821
        return r if r.ndim else r._scalar()
    raise OverflowError("Python int too large to convert to C long")


def _big_int_where(condition, x, y):
    """numpy.where(condition, x, y) with a Python int beyond int64/uint64 as x or y."""
    vals = [x, y]
    codes = [v for v in vals if not _is_big_int(v)]
    dts = [v.dtype if isinstance(v, ndarray) else (type(v) if type(v) in (int, float, complex) else
                                                   _np.asarray(_to_numpy(v)).dtype) for v in codes]
    rt = _np.result_type(*[d if not isinstance(d, type) else d(0) for d in dts], 0) if dts else _np.dtype(int)
    if rt.kind not in "fc":
        raise OverflowError("Python int too large to convert to C long")
    return where(condition, *[float(v) if _is_big_int(v) else v for v in vals])


# ndarray's operators, from the dunders column of the op table ("forward [reflected [in-place]]").
_BINARY = {}
_REFLECTED = {}
_INPLACE = {}
_UNARY = {}
for _i, _row in enumerate(_TABLE):
    for _dunder, _kind in zip(_row.dunders, (_UNARY, _REFLECTED, _INPLACE) if _row.nin == 1 else
                              (_BINARY, _REFLECTED, _INPLACE)):
        _kind[_dunder] = _i
_core._install_operators(ndarray, _BINARY, _REFLECTED, _INPLACE, _UNARY)
_pow_fwd = ndarray.__pow__
_ipow_fwd = ndarray.__ipow__


# Note [fast scalar power]
# NumPy's ndarray ** (array_power, fast_scalar_power in multiarray/number.c) replaces three
# exponents by a unary ufunc, which has its own results and warning names: a Python int
# (exactly int, not bool) 2 is np.square for every dtype (bool ** 2 is int8), -1 is
# np.reciprocal and a Python float 0.5 is np.sqrt for float and complex arrays only
# ("divide by zero encountered in reciprocal"; complex 1 / (inf + 1j) is 0 - 0j where npy_cpow
# gives nan). `x **= e` takes the same path with out=x. Other exponents (-1.0, 2.0, 0, 1,
# np.int64(2), 0-d arrays) are numpy.power. NumPy scalars (0-d scalar results) run NumPy's
# scalar power instead (Note [scalar math] in src/tracer/trace.hpp).
def _fast_power_op(self, other):
    """The unary ufunc NumPy's ndarray ** other runs instead of power, or None."""
    if type(other) is int:
        if other == 2:
            return square  # noqa: F821
        if other == -1 and self.dtype.kind in "fc":
            return reciprocal  # noqa: F821
    elif type(other) is float and other == 0.5 and self.dtype.kind in "fc":
        return sqrt  # noqa: F821
    return None


def _pow(self, other, modulo=None):
    """ndarray ** other with NumPy's fast scalar powers (Note [fast scalar power])."""
    if modulo is not None:
        return NotImplemented
    if self.ndim == 0 and _core._scalar_result(self):
        return _pow_fwd(self, other)  # NumPy's scalar power (Note [scalar math] in src/tracer/trace.hpp)
    op = _fast_power_op(self, other)
    return op(self) if op is not None else _pow_fwd(self, other)


def _ipow(self, other):
    """ndarray **= other with NumPy's fast scalar powers (Note [fast scalar power])."""
    if self.ndim == 0 and _core._scalar_result(self):
        # A NumPy scalar has no **=: Python computes self ** other and rebinds the name (Note
        # [in-place operators of scalar results] in python/npc/csrc/bind_ops.cpp).
        return NotImplemented
    op = _fast_power_op(self, other)
    return op(self, out=self) if op is not None else _ipow_fwd(self, other)


ndarray.__pow__ = _pow
ndarray.__ipow__ = _ipow


# ---------------------------------------------------------------- threads
def set_num_threads(n):
    """Number of threads npc's eager kernels use (default: all cores). NumPy has no such
    setting; like torch.set_num_threads."""
    _core.set_num_threads(_operator.index(n))


def get_num_threads():
    """Number of threads npc's eager kernels use."""
    return _core.get_num_threads()


def set_parallel_threshold(n):
    """Work size (elements) below which kernels run on the calling thread only."""
    _core.set_parallel_threshold(_operator.index(n))


def get_parallel_threshold():
    """Work size (elements) below which kernels run on the calling thread only."""
    return _core.get_parallel_threshold()


# ---------------------------------------------------------------- ndarray methods
def _m_conj(self):
    # numpy.ndarray.conj returns the array itself for real dtypes.
    if self.dtype.kind != "c":
        return self
    return conjugate(self)  # noqa: F821


ndarray.conj = ndarray.conjugate = _m_conj

# The reductions and composites are written with the ufuncs above; ufunc.reduce/accumulate
# and the big-int operators call back into them.
from ._reductions import _check_reduce_loop, _reduce, _warn_complex_casts  # noqa: E402
from ._composites import where  # noqa: E402

__all__ = (["ufunc"] + list(_UFUNCS) + _ALIASES +
           ["set_num_threads", "get_num_threads", "set_parallel_threshold", "get_parallel_threshold"])
