"""ufuncs, array operators and reductions (numpy.ufunc, numpy.sum, ...).

Every ufunc is an :class:`ufunc` object built from a row of the op table
(``include/npc/ops.def``); calls reach C++ through one generic binding
(``_core.ufunc_call``). Composite functions (ptp, isclose, clip, round; the statistics
are in _statistics.py) are written with these primitives, following NumPy's own formulas so results and dtypes
match. Anything with a non-native dtype runs on NumPy (npc._fallback).
"""
import builtins
import operator as _operator
import warnings

import numpy as _np

from . import _core
from . import _fallback
from ._array import _as_npc, _from_numpy, _subclass_wrapper, _wrap_result, _wrap_ufunc_result, ndarray
from ._dtypes import DTYPES, code_of

_NOT_NATIVE = object()  # returned by the bindings when an operand is not native to npc
_call_simple = _core.ufunc_call_simple
_reduce_all = _core.reduce_all
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
                self.__name__ not in ("logical_and", "logical_or", "logical_xor"):  # (bool loops)
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
                raise ValueError("array is not broadcastable to correct shape") from None
            b = _from_numpy(_np.ascontiguousarray(bb))
        flags = _core.ufunc_at(self._id, a, _from_numpy(_np.ascontiguousarray(idx)), b)
        if b is not None and b.dtype.kind == "c" and a.dtype.kind not in "cb" and _at_drops_imag(self, a, b):
            warnings.warn("Casting complex values to real discards the imaginary part", _np.exceptions.ComplexWarning,
                          stacklevel=2)
        if idx.size == 0:
            return
        indexed = _at_indexed_loop(self, a, indices, sel.size, None if b is None else b_given)
        if indexed and self.__name__ in ("maximum", "minimum") and a.dtype.char in "fd" and \
                _np.isnan(_to_numpy(a)[_to_numpy(indices)]).any():
            flags |= 8  # the indexed loop's ordered comparison with a NaN raises 'invalid'
        if flags:
            _fp_error(flags, self.__name__ if indexed else "at")

    def reduceat(self, *args, **kwargs):
        r = self._fallback("reduceat", args, kwargs)
        return _method_result(r, args[:1] or (kwargs.get("array"),), kwargs.get("out"))

    def resolve_dtypes(self, *args, **kwargs):
        return self._np.resolve_dtypes(*args, **kwargs)


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

# NumPy's aliases.
true_divide = _UFUNCS["divide"]
mod = _UFUNCS["remainder"]
abs = _UFUNCS["absolute"]
conj = _UFUNCS["conjugate"]
bitwise_not = _UFUNCS["invert"]
bitwise_invert = _UFUNCS["invert"]
bitwise_left_shift = _UFUNCS["left_shift"]
bitwise_right_shift = _UFUNCS["right_shift"]


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
acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh  # noqa: F821
atan, atanh, atan2 = arctan, arctanh, arctan2  # noqa: F821
pow = _UFUNCS["power"]

_ALIASES = ["true_divide", "mod", "abs", "conj", "bitwise_not", "bitwise_invert", "bitwise_left_shift",
            "bitwise_right_shift", "degrees", "radians", "acos", "acosh", "asin", "asinh", "atan",
            "atanh", "atan2", "pow"]


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
        above = (args[i] > 0) == (i == 1)  # the right-hand side is the larger one
        value = {"equal": False, "not_equal": True, "less": above, "less_equal": above,
                 "greater": not above, "greater_equal": not above}[name]
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


def _pow(self, other, modulo=None):
    """ndarray ** other with NumPy's fast scalar powers: ** 2 is square (bool ** 2 is int8),
    ** 0.5 is sqrt for inexact arrays."""
    if modulo is not None:
        return NotImplemented
    if self.ndim == 0 and _core._scalar_result(self):
        return _pow_fwd(self, other)  # NumPy's scalar power (Note [scalar math] in src/tracer/trace.hpp)
    t = type(other)
    if t is int and other == 2:
        return square(self)  # noqa: F821
    if t is float and other == 0.5 and self.dtype.kind in "fc":
        return sqrt(self)  # noqa: F821
    return _pow_fwd(self, other)


ndarray.__pow__ = _pow


# ---------------------------------------------------------------- reductions
def _axis_arg(axis, ndim=None):
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return [_operator.index(a) for a in axis]
    return [_operator.index(axis)]


def _native(a):
    """npc array for `a`, or None when it is not native (then NumPy runs the call)."""
    if isinstance(a, ndarray):
        return a
    r = _as_npc(a)
    return r if isinstance(r, ndarray) else None


def _where_arg(where):
    if where is True:
        return None
    w = _native(where)
    if w is None:
        raise TypeError("where must be a boolean array")
    # NumPy converts a mask that is not an array (a list, a Python bool) to bool; an array
    # mask of another dtype is the reduction's TypeError (cast to bool under 'safe').
    if w.dtype != _np.bool_ and not isinstance(where, (ndarray, _np.ndarray)):
        w = w.astype(_np.bool_)
    return w


def _reduce(uf, array, axis, dtype, out, keepdims, initial, where, fname=None):
    a = _native(array)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("The 'out' tuple must have exactly one entry")
        out = out[0]
    code = -1 if dtype is None else code_of(dtype)
    if a is None or code is None or (out is not None and not isinstance(out, ndarray)):
        kw = dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
        if initial is not _np._NoValue:
            kw["initial"] = initial
        if fname is not None:
            _fallback.record(fname)
            # Defaults stay unsaid, so subclasses whose methods lack a keyword (a masked
            # array's sum has no where=) get NumPy's own call.
            kw = {k: v for k, v in kw.items() if not ((k == "dtype" and v is None) or (k == "where" and v is True)
                                                       or (k == "keepdims" and v is False))}
            return _fallback.from_numpy(getattr(_np, fname)(_to_numpy(array), **_to_numpy(kw)))
        return uf._fallback("reduce", (array,), kw)
    if (a.dtype.kind == "c" or (out is not None and out.dtype.kind == "c") or
            (dtype is not None and _np.dtype(dtype).kind == "c")) and \
            uf.__name__ not in ("logical_and", "logical_or", "logical_xor"):  # (bool loops)
        # Without identity or initial=, an empty reduced axis raises before NumPy copies
        # the first elements into out (one cast, one warning fewer).
        starts = True
        if out is not None and uf.identity is None and (initial is _np._NoValue or initial is None) and a.size == 0:
            ax = range(a.ndim) if axis is None else (axis,) if not isinstance(axis, tuple) else axis
            try:
                starts = builtins.all(a.shape[_operator.index(d) % a.ndim] for d in ax) if a.ndim else True
            except (TypeError, ZeroDivisionError):
                pass
        _check_reduce_loop(uf, a, dtype, out)
        _warn_complex_casts(a, dtype, out, reduce=True if starts else False)
    init = None if initial is _np._NoValue or initial is None else initial
    int_loop = a.dtype.kind in "iub" if dtype is None else _np.dtype(dtype).kind in "iub"
    if dtype is None and out is not None:  # NumPy resolves the loop from (out, input)
        int_loop = int_loop and out.dtype.kind in "iub"
    if (type(init) is int and (init < -2**31 or init > 2**31 - 1 or a.dtype.kind in "iu" or
                               (dtype is not None and _np.dtype(dtype).kind in "iu") or
                               (dtype is None and out is not None and out.dtype.kind in "iub"))) or \
            (type(init) is float and int_loop):  # np.sum(uint8, out=uint8, initial=-1.5) raises
        _check_initial(uf, a, dtype, out, init)
        if not -2**63 <= init < 2**64:
            init = float(init)  # NumPy accepted it, so the loop is inexact (np.sum(f4, initial=2**70))
    try:
        return _core.ufunc_reduce(uf._id, a, _axis_arg(axis), bool(keepdims), code, out, init, _where_arg(where))
    except ValueError as e:
        if out is None or not str(e).startswith("output parameter for reduction operation"):
            raise
        _raise_reduce_out_error(uf, a, axis, dtype, out, keepdims)
        raise


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


def _check_reduce_loop(uf, a, dtype, out, accumulate=False):
    """Raises NumPy's TypeError when reduce/accumulate has no loop for the signature that
    dtype= / out= make (Note [reduce loop signature] in reduce_resolve.cpp): NumPy resolves the loop
    before any cast, so no cast warning comes first."""
    _core.reduce_loop_dtype(uf._id, code_of(a.dtype), -1 if dtype is None else code_of(dtype),
                            -1 if out is None else code_of(out.dtype), accumulate)


def _warn_complex_casts(a, dtype, out, reduce):
    """NumPy's ComplexWarning for the casts of a reduction (reduce=True) or accumulation
    that drop an imaginary part (Note [complex input casts] in bind_ops.cpp): the input into
    a real loop dtype `dtype=`; a complex out= read into a real loop (reductions read out
    first); a complex loop written to a real out= (reductions warn twice there: the first
    values or the identity go into out, then the result). Casts to bool never warn."""
    if dtype is not None:
        loop = _np.dtype(dtype)
    elif a.dtype.kind == "c":
        loop = a.dtype
    else:
        return  # a real loop, or out's complex dtype itself: nothing is dropped
    def drops(src, dst):
        return src.kind == "c" and dst.kind not in "cb"
    n = int(drops(a.dtype, loop))
    if out is not None and out.dtype != loop:
        n += int(drops(out.dtype, loop)) + (2 if reduce else 1) * int(drops(loop, out.dtype))
    for _ in range(n):
        warnings.warn("Casting complex values to real discards the imaginary part", _np.exceptions.ComplexWarning,
                      stacklevel=4)


def _check_initial(uf, a, dtype, out, initial):
    """NumPy converts a Python int `initial` to the loop dtype as NEP 50 does: out of its
    range it raises OverflowError ("Python integer -1 out of bounds for uint8", "Python int
    too large to convert to C long"). NumPy's own conversion runs on an empty stand-in."""
    np_uf = getattr(_np, uf.__name__, None)
    if not isinstance(np_uf, _np.ufunc):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np_uf.reduce(_np.empty(0, a.dtype), dtype=dtype, initial=initial,
                         out=None if out is None else _np.empty((), out.dtype))
        except OverflowError as e:
            raise OverflowError(str(e)) from None
        except Exception:
            pass


def _raise_reduce_out_error(uf, a, axis, dtype, out, keepdims):
    """Raises NumPy's error for a reduction `out` of the wrong shape: "... has the wrong number
    of dimensions: Found 2 but expected 1", "operands could not be broadcast together with
    remapped shapes [original->remapped]: ...", "output operand requires a reduction along
    dimension ...", "operand was set up as a reduction along axis ...": NumPy's own checks,
    run on one-element zero-stride stand-ins of the operands' shapes."""
    def stand_in(shape, dt):
        return _np.lib.stride_tricks.as_strided(_np.zeros(1, dt), shape=shape, strides=(0,) * len(shape))
    np_uf = getattr(_np, uf.__name__, None)
    if not isinstance(np_uf, _np.ufunc):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            np_uf.reduce(stand_in(a.shape, a.dtype), axis=axis, dtype=dtype, out=_np.empty(out.shape, out.dtype),
                         keepdims=keepdims)
        except ValueError as e:
            raise ValueError(str(e)) from None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.sum: sum over `axis` (None, int or tuple). Small integers and bool sum in
    int64/uint64; floats use NumPy's pairwise summation. Returns a NumPy scalar for full
    reductions, an npc array otherwise."""
    if type(a) is ndarray and axis is None and dtype is None and out is None and not keepdims and \
            initial is _np._NoValue and where is True:
        return _reduce_all(_OP_ID["add"], a)
    return _reduce(add, a, axis, dtype, out, keepdims, initial, where, "sum")  # noqa: F821


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.prod: product over `axis` (dtype rules as numpy.sum)."""
    return _reduce(multiply, a, axis, dtype, out, keepdims, initial, where, "prod")  # noqa: F821


def max(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.max (amax): maximum over `axis`; NaN propagates. ValueError for an empty
    reduction without `initial`."""
    return _reduce(maximum, a, axis, None, out, keepdims, initial, where, "max")  # noqa: F821


def min(a, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    """numpy.min (amin): minimum over `axis`; NaN propagates."""
    return _reduce(minimum, a, axis, None, out, keepdims, initial, where, "min")  # noqa: F821


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.any: whether any element along `axis` is true (bool result)."""
    return _reduce(logical_or, a, axis, None, out, keepdims, _np._NoValue, where, "any")  # noqa: F821


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    """numpy.all: whether all elements along `axis` are true (bool result)."""
    return _reduce(logical_and, a, axis, None, out, keepdims, _np._NoValue, where, "all")  # noqa: F821


def _arg(opname, a, axis, out, keepdims):
    x = _native(a)
    if x is None:
        _fallback.record(opname)
        return _fallback.from_numpy(getattr(_np, opname)(_to_numpy(a), axis=axis, out=_to_numpy(out),
                                                         keepdims=keepdims))
    r = _core.arg_reduce(_OP_ID[opname], x, None if axis is None else _operator.index(axis), bool(keepdims))
    if out is not None:
        copyto_(out, r)
        return out
    return r


def argmax(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmax: index of the first maximum (NaN counts as maximum); int64 result.
    ValueError "attempt to get argmax of an empty sequence" for empty input."""
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """numpy.argmin: index of the first minimum (NaN counts as minimum); int64 result."""
    return _arg("argmin", a, axis, out, keepdims)


def copyto_(dst, src):
    """Copies `src` (broadcast) into npc array `dst` with an unsafe cast."""
    s = _native(src)
    s = _np.broadcast_to(_to_numpy(s), dst.shape)
    _core._copy_into(dst, _from_numpy(_np.asarray(s, order="C")) if not isinstance(src, ndarray) or
                     src.shape != dst.shape else src)


def _flat(a):
    return a.reshape(-1) if a.ndim != 1 else a


def _cum(uf, name, a, axis, dtype, out):
    x = _native(a)
    if x is None or (dtype is not None and code_of(dtype) is None) or (out is not None and not isinstance(out, ndarray)):
        _fallback.record(name)
        return _fallback.from_numpy(getattr(_np, name)(_to_numpy(a), axis=axis, dtype=dtype, out=_to_numpy(out)))
    if axis is None:
        x = _flat(x)
        axis = 0
    if x.ndim == 0:
        x = x.reshape(1)
    if x.dtype.kind == "c" or (dtype is not None and _np.dtype(dtype).kind == "c") or \
            (isinstance(out, ndarray) and out.dtype.kind == "c"):
        _check_reduce_loop(uf, x, dtype, out, accumulate=True)
        _warn_complex_casts(x, dtype, out, reduce=False)
    return _core.ufunc_accumulate(uf._id, x, _operator.index(axis), -1 if dtype is None else code_of(dtype), out)


def cumsum(a, axis=None, dtype=None, out=None):
    """numpy.cumsum: running sum along `axis` (flattened when None); int64 for small ints."""
    return _cum(add, "cumsum", a, axis, dtype, out)  # noqa: F821


def cumprod(a, axis=None, dtype=None, out=None):
    """numpy.cumprod: running product along `axis` (flattened when None)."""
    return _cum(multiply, "cumprod", a, axis, dtype, out)  # noqa: F821


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min along `axis` (same dtype, wraps for integers like NumPy)."""
    x = _native(a)
    if x is None:
        _fallback.record("ptp")
        return _fallback.from_numpy(_np.ptp(_to_numpy(a), axis=axis, out=_to_numpy(out), keepdims=keepdims))
    return subtract(max(x, axis=axis, keepdims=keepdims), min(x, axis=axis, keepdims=keepdims), out=out)  # noqa: F821


def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero: number of non-zero elements (int for axis=None, else an intp array)."""
    x = _native(a)
    if x is None:
        _fallback.record("count_nonzero")
        return _np.count_nonzero(_to_numpy(a), axis=axis, keepdims=keepdims)
    nz = x if x.dtype == _np.bool_ else not_equal(x, 0)  # noqa: F821
    return sum(nz, axis=axis, dtype=_np.intp, keepdims=keepdims)


def broadcast_to(array, shape, subok=False):
    """numpy.broadcast_to: a read-only view of `array` with `shape` (ValueError when it does
    not broadcast)."""
    x = _native(array)
    if x is None:
        return _np.broadcast_to(array, shape)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if x.shape == shape:
        return x
    return _from_numpy(_np.broadcast_to(_to_numpy(x), shape))


# ---------------------------------------------------------------- selection and composites
def where(condition, x=_np._NoValue, y=_np._NoValue, /):
    """numpy.where: `x` where `condition` else `y` (broadcast; dtype as result_type(x, y)
    with weak Python scalars). With only `condition`: numpy.nonzero(condition)."""
    if x is _np._NoValue and y is _np._NoValue:
        import npc
        return npc.nonzero(condition)
    if x is _np._NoValue or y is _np._NoValue:
        raise ValueError("either both or neither of x and y should be given")
    r = _core.where3(condition, x, y)
    if r is _NOT_NATIVE:
        _fallback.record("where")
        return _fallback.from_numpy(_np.where(_to_numpy(condition), _to_numpy(x), _to_numpy(y)))
    return r


_select = where


def clip(a, a_min=_np._NoValue, a_max=_np._NoValue, out=None, *, min=_np._NoValue, max=_np._NoValue, **kwargs):
    """numpy.clip: minimum(maximum(a, a_min), a_max) with NumPy 2's promotion (NaN propagates).

    Bounds are both positional (``a_min``, ``a_max``; None for no bound) or both keywords
    (``min``, ``max``), as NumPy's: TypeError when one positional bound is missing,
    ValueError for both kinds at once."""
    if a_min is _np._NoValue and a_max is _np._NoValue:
        a_min = None if min is _np._NoValue else min
        a_max = None if max is _np._NoValue else max
    elif a_min is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not _np._NoValue or max is not _np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    return _clip(a, a_min, a_max, out, **kwargs)


def _clip(a, a_min, a_max, out=None, **kwargs):
    """numpy.ndarray.clip (NumPy's _methods._clip): None is no bound."""
    x = _native(a)
    if isinstance(x, ndarray) and x.dtype.kind in "iu":
        # NumPy's _clip: a Python int bound beyond the integer dtype's range is no bound
        # (NEP 50 would otherwise raise OverflowError for it).
        info = _np.iinfo(x.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        # NumPy's identity: positive(a) (a scalar for 0-d input; no loop for bool, objects, str).
        return positive(a, out=out, **kwargs)  # noqa: F821
    if a_min is not None and a_max is not None and isinstance(x, ndarray) and x.dtype.kind == "f" and \
            x.dtype.itemsize > 2 and _np.ndim(a_min) == 0 and _np.ndim(a_max) == 0:
        # numpy.clip with two scalar bounds keeps x where it equals a bound (clip(-0.0, 0, 1)
        # is -0.0); npc's float32/64 maximum and minimum return their second operand on ties.
        return minimum(a_max, maximum(a_min, a, **kwargs), out=out, **kwargs)  # noqa: F821
    r = a
    if a_min is not None:
        r = maximum(r, a_min, **kwargs) if a_max is not None else maximum(r, a_min, out=out, **kwargs)  # noqa: F821
    if a_max is not None:
        r = minimum(r, a_max, out=out, **kwargs)  # noqa: F821
    return r


def _power_of_ten(n):
    """NumPy's power_of_ten (multiarray/calculation.c): exact powers up to 1e8, then repeated
    multiplication by 10 (which rounds differently from 10.0 ** n beyond 1e22, and gives inf
    instead of Python's OverflowError)."""
    if n < 9:
        return 10.0 ** n
    r = 1e9
    while n > 9 and r != float("inf"):
        r *= 10.0
        n -= 1
    return r


def _decimals(d):
    """round's `decimals` as NumPy converts it (a C int): OverflowError beyond C long, then
    beyond int."""
    d = _operator.index(d)
    if not -2 ** 63 <= d < 2 ** 63:
        raise OverflowError("Python int too large to convert to C long")
    if d >= 2 ** 31:
        raise OverflowError("signed integer is greater than maximum")
    if d < -2 ** 31:
        raise OverflowError("signed integer is less than minimum")
    return d


def round(a, decimals=0, out=None):
    """numpy.round/around: round half to even to `decimals` places (NumPy's
    multiply-rint-divide for floats, with NumPy's power of ten as a weak Python float;
    integers unchanged for decimals >= 0; complex numbers part by part in their real dtype,
    as NumPy's PyArray_Round)."""
    x = _native(a)
    if x is None:
        _fallback.record("round")
        return _np.round(a, decimals, out)
    decimals = _decimals(decimals)
    k = x.dtype.kind
    if k in "iu":
        if decimals >= 0:
            if out is not None:
                return positive(x, out=out)  # noqa: F821
            return x.copy() if x.ndim else x._scalar()
        if out is not None:
            _fallback.record("round")
            return _fallback.from_numpy(_np.round(_to_numpy(x), decimals, _to_numpy(out)))
        # NumPy's PyArray_Round for integers: divide by the power of ten into float64, rint,
        # multiply back, and cast to the input dtype (with the cast's warnings).
        f = _power_of_ten(-decimals)
        y = multiply(rint(divide(x, f)), f)  # noqa: F821
        return y.astype(x.dtype)
    if k == "c":
        if out is not None and (not isinstance(out, ndarray) or out.dtype.kind != "c"):
            _fallback.record("round")
            return _fallback.from_numpy(_np.round(_to_numpy(x), decimals, _to_numpy(out)))
        # NumPy copies the array (or assigns it to out=), then sets .real and .imag to the
        # rounded parts, each rounded in the parts' float dtype.
        r = x.copy() if out is None else out
        if out is not None:
            copyto_(r, x)
        r_re, r_im = round(x.real, decimals), round(x.imag, decimals)
        copyto_(r.real, r_re)
        copyto_(r.imag, r_im)
        return r if out is not None or x.ndim else r._scalar()
    if decimals == 0:
        return rint(x, out=out)  # noqa: F821
    if k == "b" and out is None:
        # PyArray_Round writes a bool input's scaled values into an array like the input:
        # the float64 product does not cast into bool under same_kind.
        raise _np._core._exceptions._UFuncOutputCastingError(
            _np.multiply if decimals > 0 else _np.divide, "same_kind", _np.dtype(_np.float64), _np.dtype(_np.bool_), 0)
    op1, op2 = (multiply, divide) if decimals > 0 else (divide, multiply)  # noqa: F821
    f = _power_of_ten(builtins.abs(decimals))
    y = rint(op1(x, f))  # noqa: F821
    return op2(y, f, out=out) if out is not None else op2(y, f)


around = round


def fix(x, out=None):
    """numpy.fix: round towards zero (ceil for negatives, floor otherwise). Deprecated in
    NumPy 2.5 like numpy.fix (DeprecationWarning): use trunc."""
    warnings.warn("numpy.fix is deprecated. Use numpy.trunc instead, which is faster and follows the Array "
                  "API standard.", DeprecationWarning, stacklevel=2)
    return trunc(x, out=out) if out is not None else trunc(x)  # noqa: F821


def real(val):
    """numpy.real: real part (a view for complex arrays); a scalar's own ``.real`` for
    scalars (Python or NumPy), as numpy.real."""
    if not isinstance(val, (ndarray, _np.ndarray, list, tuple)) and hasattr(val, "real"):
        return val.real
    x = _native(val)
    return x.real if x is not None else _np.real(val)


def imag(val):
    """numpy.imag: imaginary part (zeros for real input); a scalar's own ``.imag`` for
    scalars (Python or NumPy), as numpy.imag."""
    if not isinstance(val, (ndarray, _np.ndarray, list, tuple)) and hasattr(val, "imag"):
        return val.imag
    x = _native(val)
    return x.imag if x is not None else _np.imag(val)


def angle(z, deg=False):
    """numpy.angle: arctan2(imag, real) in radians (degrees when `deg`)."""
    x = _native(z)
    if x is None:
        _fallback.record("angle")
        return _np.angle(z, deg)
    if x.dtype.kind == "c":
        a = arctan2(x.imag, x.real)  # noqa: F821
    else:
        a = arctan2(0, x)  # noqa: F821
    if deg:
        a = multiply(a, 180 / _np.pi)  # noqa: F821
    return a


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: NaN -> `nan`, +inf -> `posinf` (default: the dtype's max), -inf ->
    `neginf` (default: the dtype's min); complex parts separately. A 0-d input gives a
    NumPy scalar, as NumPy's."""
    if isinstance(copy, str):
        raise ValueError("strings are not allowed for 'copy' keyword. Use True/False/None instead.")
    a = _native(x)
    if a is None:
        _fallback.record("nan_to_num")
        return _np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    r = _nan_to_num(a, copy, nan, posinf, neginf)
    return r._scalar() if isinstance(r, ndarray) and r.ndim == 0 else r


def _nan_to_num(a, copy, nan, posinf, neginf):
    if a.dtype.kind not in "fc":
        return a.copy() if copy else a
    if a.dtype.kind == "c":
        re = _nan_to_num(a.real, True, nan, posinf, neginf)
        im = _nan_to_num(a.imag, True, nan, posinf, neginf)
        r = a.copy() if copy else a
        r.real = re
        r.imag = im
        return r
    t = a.dtype.type
    info = _np.finfo(a.dtype)
    pi_ = t(info.max if posinf is None else posinf)
    ni_ = t(info.min if neginf is None else neginf)
    # The masks come from the input, as NumPy's: a `nan` replacement that overflows to inf
    # is not then replaced by `posinf`.
    pos, neg = equal(a, t(_np.inf)), equal(a, t(-_np.inf))  # noqa: F821
    r = where(isnan(a), t(nan), a)  # noqa: F821
    r = where(pos, pi_, r)
    r = where(neg, ni_, r)
    if not copy:
        _core._copy_into(a, r)
        return a
    return r


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b| elementwise (NaNs equal when
    `equal_nan`); a bool array, or a NumPy bool for scalar input."""
    x = a if isinstance(a, (int, float, complex)) else _native(a)
    y = b if isinstance(b, (int, float, complex)) else _native(b)
    if x is None or y is None:
        _fallback.record("isclose")
        return _np.isclose(_to_numpy(a), _to_numpy(b), rtol, atol, equal_nan)
    _check_tolerances(rtol, atol)
    if isinstance(y, ndarray):
        dt = _np.result_type(y.dtype, 1.0)
        if y.dtype != dt:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    with _np.errstate(invalid="ignore"):
        r = logical_or(logical_and(less_equal(absolute(subtract(x, y)),  # noqa: F821
                                              add(atol, multiply(rtol, absolute(y)))), isfinite(y)),  # noqa: F821
                       equal(x, y))  # noqa: F821
        if equal_nan:
            r = logical_or(r, logical_and(isnan(x), isnan(y)))  # noqa: F821
    return r


def _check_tolerances(rtol, atol):
    """NumPy's check of isclose's tolerances: TypeError for values isfinite has no loop for
    (Python ints beyond 64 bits), and the 'invalid' error state's reaction (warning,
    FloatingPointError, ...) to infinite or NaN tolerances."""
    if type(rtol) is float and type(atol) is float and rtol - rtol == 0 and atol - atol == 0:
        return  # finite floats (the common case)
    if not (_np.all(_np.isfinite(_to_numpy(atol))) and _np.all(_np.isfinite(_to_numpy(rtol)))):
        err_s = _np.geterr()["invalid"]
        err_msg = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        if err_s == "warn":
            warnings.warn(err_msg, RuntimeWarning, stacklevel=3)
        elif err_s == "raise":
            raise FloatingPointError(err_msg)
        elif err_s == "print":
            print(err_msg)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.allclose: all(isclose(...)) as a Python bool."""
    return bool(all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """numpy.array_equal: same shape and all elements equal (NaNs equal when `equal_nan`)."""
    x, y = _native(a1), _native(a2)
    if x is None or y is None:
        _fallback.record("array_equal")
        return _np.array_equal(_to_numpy(a1), _to_numpy(a2), equal_nan)
    if x.shape != y.shape:
        return False
    if not equal_nan:
        return builtins.bool(all(equal(x, y)))  # noqa: F821
    if x.dtype.kind not in "fc" and y.dtype.kind not in "fc":
        return builtins.bool(all(equal(x, y)))  # noqa: F821
    nx, ny = isnan(x), isnan(y)  # noqa: F821
    if not builtins.bool(all(equal(nx, ny))):  # noqa: F821
        return False
    return builtins.bool(all(logical_or(equal(x, y), nx)))  # noqa: F821


def array_equiv(a1, a2):
    """numpy.array_equiv: broadcastable and all elements equal."""
    x, y = _native(a1), _native(a2)
    if x is None or y is None:
        _fallback.record("array_equiv")
        return _np.array_equiv(_to_numpy(a1), _to_numpy(a2))
    try:
        _np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return builtins.bool(all(equal(x, y)))  # noqa: F821


# median, quantile, percentile and their nan- forms: python/npc/_quantile.py


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
_ADD_ID, _MUL_ID, _MAX_ID, _MIN_ID = (_OP_ID[n] for n in ("add", "multiply", "maximum", "minimum"))


def _m_sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and dtype is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_ADD_ID, self)
    return sum(self, axis, dtype, out, keepdims, initial, where)


def _m_prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    return prod(self, axis, dtype, out, keepdims, initial, where)


def _m_max(self, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_MAX_ID, self)
    return max(self, axis, out, keepdims, initial, where)


def _m_min(self, axis=None, out=None, keepdims=False, initial=_np._NoValue, where=True):
    if axis is None and out is None and not keepdims and initial is _np._NoValue and where is True:
        return _reduce_all(_MIN_ID, self)
    return min(self, axis, out, keepdims, initial, where)


def _m_any(self, axis=None, out=None, keepdims=False, *, where=True):
    return any(self, axis, out, keepdims, where=where)


def _m_all(self, axis=None, out=None, keepdims=False, *, where=True):
    return all(self, axis, out, keepdims, where=where)


def _m_argmax(self, axis=None, out=None, *, keepdims=False):
    return argmax(self, axis, out, keepdims=keepdims)


def _m_argmin(self, axis=None, out=None, *, keepdims=False):
    return argmin(self, axis, out, keepdims=keepdims)


def _m_cumsum(self, axis=None, dtype=None, out=None):
    return cumsum(self, axis, dtype, out)


def _m_cumprod(self, axis=None, dtype=None, out=None):
    return cumprod(self, axis, dtype, out)


def _m_round(self, decimals=0, out=None):
    return round(self, decimals, out)


def _m_clip(self, min=None, max=None, out=None, **kwargs):
    return _clip(self, min, max, out, **kwargs)


def _m_conj(self):
    # numpy.ndarray.conj returns the array itself for real dtypes.
    if self.dtype.kind != "c":
        return self
    return conjugate(self)  # noqa: F821


for _name, _fn in (("sum", _m_sum), ("prod", _m_prod), ("max", _m_max), ("min", _m_min), ("any", _m_any),
                   ("all", _m_all), ("argmax", _m_argmax), ("argmin", _m_argmin), ("cumsum", _m_cumsum),
                   ("cumprod", _m_cumprod), ("round", _m_round), ("clip", _m_clip), ("conj", _m_conj),
                   ("conjugate", _m_conj)):
    setattr(ndarray, _name, _fn)

__all__ = (["ufunc"] + list(_UFUNCS) + _ALIASES +
           ["sum", "prod", "max", "min", "amax", "amin", "any", "all", "argmax", "argmin", "cumsum", "cumprod",
            "ptp", "count_nonzero", "where",
            "clip", "round", "around", "fix", "real", "imag", "angle", "nan_to_num", "isclose", "allclose",
            "array_equal", "array_equiv", "set_num_threads", "get_num_threads",
            "set_parallel_threshold", "get_parallel_threshold"])
