"""Protocols: how npc arrays meet NumPy and the rest of the ecosystem.

- ``__array_ufunc__`` (NEP 13): ``numpy.sin(npc_array)``, ``numpy_array + npc_array``,
  ``numpy.add.reduce(npc_array)`` run npc's ufunc of the same name when npc has it
  natively (its ``reduce``/``accumulate``/``outer``/``at``/``reduceat`` method for the
  ufunc methods), else NumPy's on zero-copy views; results are npc arrays.
- ``__array_function__`` (NEP 18): ``numpy.concatenate([...])``, ``numpy.linalg.solve``,
  ... run npc's function of the same name (in the mirrored module: ``npc``,
  ``npc.linalg``, ``npc.fft``, ...) when npc defines it natively, else NumPy's.
- ``__array__`` (zero-copy, NumPy 2's ``copy=``), the buffer protocol, ``__dlpack__``,
  ``__dlpack_device__`` and :func:`from_dlpack`, ``__array_namespace__`` (npc is an array
  API namespace), pickling, ``copy``/``deepcopy``.

Note [routing by name]
Routing looks the name up in the npc module's ``__dict__`` at each call (one dict lookup),
so a function another layer defines natively is used from the moment it exists, with no
registration, and a fallback wrapper (recognised by one set lookup of its id) sends the
call to NumPy directly. Native ufuncs get npc arrays and scalars; NumPy arrays of native
dtypes arrive as zero-copy npc views; operands of other dtypes and ndarray subclasses
never reach them. A native function that meets arguments it does not handle raises
``npc.NotNative`` and the call runs on NumPy. Other array types that implement these
protocols (neither npc nor NumPy arrays) get ``NotImplemented``, as NEP 13/18 ask.
"""
import importlib
import inspect
import sys
import types

import numpy as _np

from . import _core
from ._array import ndarray
from ._creation import _check_device
from ._fallback import (_FALLBACK_IDS, FallbackUfunc, NotNative, _restore_outputs, call, from_numpy, record,
                        to_numpy)

__all__ = ["from_dlpack", "__array_api_version__"]

#: The array API standard version npc implements: the newest NumPy supports.
__array_api_version__ = getattr(_np, "__array_api_version__", "2023.12")
_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

_NP_NDARRAY = _np.ndarray
_to_numpy_view = _core._to_numpy
_from_numpy_view = _core._from_numpy
_SCALARS = frozenset({int, float, complex, bool, type(None)})
# Argument types that need no NEP 13 deferral check.
_PLAIN_TYPES = frozenset({ndarray, _np.ndarray, int, float, complex, bool} |
                         {_np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG"})
_call_numpy = _core._call_numpy
# Types a native npc function takes as they are: npc arrays, Python and NumPy scalars.
_PASS_TYPES = frozenset({ndarray, int, float, complex, bool} | {_np.dtype(c).type for c in "?bBhHiIlLqQefdFD"})
_ns = None  # npc's module dict, set by install()


def _add_runtime_scalar_type(t):
    """Lets a traced function's runtime int (Note [runtime ints] in npc/compiler/_guards.py)
    reach npc's native ufuncs from NumPy's (``np.maximum(a, k)``) as a Python int does: the
    native operand conversion makes it a runtime operand; NumPy would ask for its value."""
    global _SCALARS, _PASS_TYPES
    _SCALARS = _SCALARS | {t}
    _PASS_TYPES = _PASS_TYPES | {t}


def _native_input(x):
    """x as an argument for a native npc implementation, or raises NotNative."""
    t = type(x)
    if t is ndarray or t in _SCALARS:
        return x
    if t is _NP_NDARRAY:
        r = _from_numpy_view(x)
        if r is None:
            raise NotNative
        return r
    if t in _PASS_TYPES:  # NumPy scalars of native dtypes
        return x
    raise NotNative


def _native_args(inputs):
    """Operands for a native ufunc (NumPy arrays of native dtypes as npc views), or None
    when one of them must run on NumPy."""
    args = []
    for x in inputs:
        t = type(x)
        if t in _PASS_TYPES:
            args.append(x)
        elif t is _NP_NDARRAY:
            v = _from_numpy_view(x)
            if v is None:
                return None
            args.append(v)
        else:
            return None
    return args


def _foreign(objs):
    """True when an object defines __array_ufunc__ without being an npc or NumPy array."""
    for x in objs:
        t = type(x)
        if t is ndarray or t is _NP_NDARRAY or t in _SCALARS:
            continue
        if type(x) is tuple:
            if _foreign(x):
                return True
            continue
        au = getattr(t, "__array_ufunc__", None)
        if au is not None and not isinstance(x, (ndarray, _NP_NDARRAY, _np.generic)):
            return True
        if au is None and hasattr(t, "__array_ufunc__"):
            return True  # __array_ufunc__ = None: the type opts out of ufuncs
    return False


# Keywords of a ufunc call that a native npc ufunc handles; any other (signature, axes,
# axis, keepdims of gufuncs, subok, order) sends the call to NumPy.
_CALL_KWARGS = frozenset({"out", "where", "dtype", "casting"})


# Note [reflected scalar operators]
# `v3 // v2` with v3 a NumPy scalar and v2 an npc value that stands for a NumPy scalar (a
# scalar result of a traced function, Note [scalar results] in src/tracer/trace.hpp) is, in
# NumPy, scalar arithmetic: "invalid value encountered in scalar floor_divide". NumPy's scalar
# operator does not hand the call back to npc's reflected operator (npc arrays define
# __array_ufunc__, so NumPy's rule is not to defer): it calls the ufunc, which arrives here
# like an explicit `np.floor_divide(v3, v2)` (a ufunc call, named "floor_divide" in NumPy).
# The two differ only in the instruction the caller's frame is executing: a binary operator
# or comparison whose symbol is this ufunc's goes to npc's reflected operator instead, which
# applies NumPy's scalar rules (Note [scalar math]) as when the npc value is on the left.
_OPERATOR_UFUNCS = {"+": ("add", "__radd__"), "-": ("subtract", "__rsub__"), "*": ("multiply", "__rmul__"),
                    "/": ("divide", "__rtruediv__"), "//": ("floor_divide", "__rfloordiv__"),
                    "%": ("remainder", "__rmod__"), "**": ("power", "__rpow__"), "&": ("bitwise_and", "__rand__"),
                    "|": ("bitwise_or", "__ror__"), "^": ("bitwise_xor", "__rxor__"),
                    "<<": ("left_shift", "__rlshift__"), ">>": ("right_shift", "__rrshift__")}
_COMPARE_UFUNCS = {"<": ("less", "__gt__"), "<=": ("less_equal", "__ge__"), "==": ("equal", "__eq__"),
                   "!=": ("not_equal", "__ne__"), ">": ("greater", "__lt__"), ">=": ("greater_equal", "__le__")}


def _operator_of_caller(ufunc):
    """The reflected method of npc.ndarray that the caller's binary operator or comparison
    stands for when it is `ufunc`'s (Note [reflected scalar operators]), else None."""
    import dis
    try:
        frame = sys._getframe(3)  # the caller of NumPy's scalar operator
        code, at = frame.f_code.co_code, frame.f_lasti
        op, arg = code[at], code[at + 1]
    except (ValueError, IndexError):
        return None
    if op == dis.opmap.get("BINARY_OP"):
        names = dis._nb_ops
        sym = names[arg][1].rstrip("=") if arg < len(names) else None
        entry = _OPERATOR_UFUNCS.get(sym)
    elif op == dis.opmap.get("COMPARE_OP"):
        idx = arg >> 4 if sys.version_info >= (3, 12) else arg
        entry = _COMPARE_UFUNCS.get(dis.cmp_op[idx]) if idx < len(dis.cmp_op) else None
    else:
        return None
    return entry[1] if entry is not None and entry[0] == ufunc.__name__ else None


def _reflected_scalar_operator(ufunc, inputs):
    a, b = inputs
    if not isinstance(a, _np.generic) or type(b) is not ndarray or not _core._scalar_result(b):
        return NotImplemented
    name = _operator_of_caller(ufunc)
    return NotImplemented if name is None else getattr(b, name)(a)


def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    """NEP 13 hook: a NumPy ufunc called with npc arrays (see the module docstring)."""
    if len(inputs) == 2 and not kwargs and method == "__call__" and inputs[1] is self and inputs[0] is not self:
        r = _reflected_scalar_operator(ufunc, inputs)
        if r is not NotImplemented:
            return r
    impl = _ns.get(ufunc.__name__)
    if impl is not None and type(impl) is not FallbackUfunc and id(impl) not in _FALLBACK_IDS:
        if method == "__call__":
            if not kwargs:
                # Hot path: npc arrays and scalars go to the native ufunc as they are; NumPy
                # arrays of native dtypes become npc views first (one C++ call, cheaper than
                # any Python-level conversion inside the ufunc); anything else goes to NumPy.
                for x in inputs:
                    if type(x) not in _PASS_TYPES:
                        args = _native_args(inputs)
                        break
                else:
                    args = inputs
                if args is not None:
                    try:
                        return impl(*args)
                    except NotNative:
                        pass
            elif _CALL_KWARGS.issuperset(kwargs):
                r = _call_native(impl, ufunc, inputs, kwargs)
                if r is not NotImplemented:
                    return r
        else:
            fn = getattr(impl, method, None)
            if fn is not None:
                if not kwargs and method != "at":
                    args = _native_args(inputs)
                    if args is not None:
                        try:
                            return fn(*args)
                        except NotNative:
                            return _ufunc_fallback(ufunc, method, inputs, kwargs)
                r = _call_native(fn, ufunc, inputs, kwargs)
                if r is not NotImplemented:
                    return r
    return _ufunc_fallback(ufunc, method, inputs, kwargs)


def _call_native(fn, ufunc, inputs, kwargs):
    try:
        args = [_native_input(x) for x in inputs]
        out = kwargs.get("out")
        kw = dict(kwargs)
        if "where" in kw:
            kw["where"] = _native_input(kw["where"])
        if out is None:
            return fn(*args, **kw)
        nat_out = tuple(_native_input(o) for o in out)
        kw["out"] = nat_out[0] if len(nat_out) == 1 else nat_out
        r = fn(*args, **kw)
    except NotNative:
        return NotImplemented
    if r is None:  # ufunc.at
        return None
    # NumPy returns the very `out` objects it was given.
    return out[0] if len(out) == 1 else tuple(out)


_UFUNC_NAMES = {}  # (ufunc, method) -> name counted in fallback_stats


def _ufunc_fallback(ufunc, method, inputs, kwargs):
    name = _UFUNC_NAMES.get((ufunc, method))
    if name is None:
        name = "npc." + ufunc.__name__ if method == "__call__" else f"npc.{ufunc.__name__}.{method}"
        _UFUNC_NAMES[(ufunc, method)] = name
    if not kwargs and method == "__call__":
        # Hot path: a plain call with arrays and scalars.
        for x in inputs:
            if type(x) not in _PLAIN_TYPES:
                break
        else:
            record(name)
            return _call_numpy(ufunc, inputs)
    out = kwargs.get("out")
    if _foreign(inputs) or (out is not None and _foreign(out)):
        return NotImplemented
    record(name)
    np_inputs = to_numpy(inputs)
    fn = ufunc if method == "__call__" else getattr(ufunc, method)
    if kwargs:
        np_kwargs = to_numpy(kwargs)
        if out is not None:
            r = fn(*np_inputs, **np_kwargs)
            if method == "at":
                return None
            return _restore_outputs(r, out, np_kwargs["out"])
        return from_numpy(fn(*np_inputs, **np_kwargs))
    return from_numpy(fn(*np_inputs))


# ---------------------------------------------------------------- __array_function__
_FUNC_ROUTES = {}  # NumPy function -> (npc module dict, name, qualified name)


def _route(func):
    mod = getattr(func, "__module__", None) or "numpy"
    name = func.__name__
    npc_mod = None
    if mod.startswith("numpy") and "._" not in mod and not mod.startswith("numpy._"):
        try:
            npc_mod = importlib.import_module("npc" + mod[5:])
        except ImportError:
            npc_mod = None
    if npc_mod is None:
        npc_mod = sys.modules["npc"]
    route = (npc_mod.__dict__, name, f"{npc_mod.__name__}.{name}")
    _FUNC_ROUTES[func] = route
    return route


def _signature_mismatch(err, impl, from_c=False):
    """True when `err` says `impl` was called with arguments its signature lacks (raised by
    the call itself, not inside `impl`: from Python the traceback then ends at the caller's
    frame, from C (`from_c`, the C++ hook) it has no entry at all)."""
    msg = str(err)
    name = getattr(impl, "__name__", "")
    tb = err.__traceback__
    return (("unexpected keyword argument" in msg or "positional argument" in msg)
            and (name + "()") in msg and (tb is None if from_c else tb is not None and tb.tb_next is None))


def _array_function_failed(self, func, types, args, kwargs, route, impl, err):
    """The C++ hook's native call of `impl` raised `err`: NumPy runs the call when npc's
    function does not handle these arguments (NotNative, or a signature NumPy's has and npc's
    lacks); any other error is the call's own."""
    if isinstance(err, NotNative) or (isinstance(err, TypeError) and _signature_mismatch(err, impl, True)):
        return _array_function_numpy(func, types, args, kwargs, route)
    raise err


def __array_function__(self, func, types, args, kwargs):
    """NEP 18 hook: a NumPy function called with npc arrays (see the module docstring)."""
    route = _FUNC_ROUTES.get(func) or _route(func)
    impl = route[0].get(route[1])
    if impl is not None and id(impl) not in _FALLBACK_IDS and impl is not func:
        for t in types:
            if t is not ndarray and t is not _NP_NDARRAY:
                break
        else:
            try:
                return impl(*args, **kwargs)
            except NotNative:
                pass
            except TypeError as e:
                # npc's function lacks an argument NumPy's has: run NumPy's.
                if not _signature_mismatch(e, impl):
                    raise
    return _array_function_numpy(func, types, args, kwargs, route)


def _array_function_numpy(func, types, args, kwargs, route):
    """NumPy's `func` on zero-copy views of the npc arguments (a counted fallback)."""
    plain = True
    for t in types:
        if t is not ndarray and t is not _NP_NDARRAY:
            if not issubclass(t, (ndarray, _NP_NDARRAY)):
                return NotImplemented
            plain = False
    record(route[2])
    # _implementation skips NumPy's dispatch (nothing left to dispatch once npc arrays are
    # views); subclasses (masked arrays, ...) keep their own overrides through func.
    fn = getattr(func, "_implementation", func) if plain else func
    np_args = to_numpy(args)
    if kwargs:
        np_kwargs = to_numpy(kwargs)
        out = kwargs.get("out")
        if out is not None:
            return _restore_outputs(fn(*np_args, **np_kwargs), out, np_kwargs["out"])
        return from_numpy(fn(*np_args, **np_kwargs))
    return from_numpy(fn(*np_args))


# ---------------------------------------------------------------- __array__, DLPack
def __array__(self, dtype=None, copy=None):
    """numpy.asarray(npc_array): a zero-copy view (NumPy 2's ``copy=``: True copies, False
    raises ValueError when a dtype conversion needs a copy)."""
    v = _to_numpy_view(self)
    if _core._scalar_result(self):
        # A NumPy scalar's array is a fresh one, never its memory (Note [views of scalar
        # results] in src/tracer/trace_nodes.cpp): writes into np.asarray(x) leave x alone.
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return v.astype(dtype) if dtype is not None else v.copy()
    if dtype is not None and _np.dtype(dtype) != v.dtype:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return v.astype(dtype)
    return v.copy() if copy else v


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export (array API): a capsule sharing this array's memory.

    Parameters
    ----------
    stream : None
        CPU arrays take no stream (ValueError otherwise, as NumPy).
    max_version : tuple of int, optional
        ``(1, x)`` or newer gives a versioned capsule ("dltensor_versioned", which can
        signal read-only arrays); older consumers get "dltensor" (BufferError for a
        read-only array).
    dl_device : tuple, optional
        Must be ``(1, 0)`` (CPU); BufferError otherwise.
    copy : bool, optional
        True exports a copy (flagged as copied); False or None shares memory.
    """
    if stream is not None:
        raise ValueError("npc CPU arrays only support stream=None.")
    if dl_device is not None and tuple(dl_device) != (1, 0):
        raise BufferError("unsupported device requested")
    versioned = max_version is not None and max_version[0] >= 1
    return _core._to_dlpack(self, versioned, bool(copy))


def __dlpack_device__(self):
    """(device type, device id) of the DLPack specification: ``(1, 0)`` is the CPU."""
    return (1, 0)


def from_dlpack(x, /, *, device=None, copy=None):
    """numpy.from_dlpack: an npc array sharing the memory of any DLPack producer (NumPy,
    PyTorch, CuPy host memory, JAX CPU arrays, npc).

    Parameters
    ----------
    x : object with ``__dlpack__`` and ``__dlpack_device__``
    device : "cpu" or None
        Any other value raises NumPy's ValueError.
    copy : bool or None
        True always copies; False never copies (BufferError if the producer must);
        None copies only when needed.

    Returns
    -------
    npc.ndarray
        Same shape, dtype and strides as `x`; read-only when the producer says so.

    Raises
    ------
    BufferError
        For devices other than the CPU, or dtypes npc does not support (e.g. bfloat16).
    AttributeError
        When `x` does not implement ``__dlpack__``.
    """
    _check_device(device)
    kwargs = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    if device is not None:
        kwargs["dl_device"] = (1, 0)
    try:
        capsule = x.__dlpack__(**kwargs)
        copied = False
    except TypeError:
        capsule = x.__dlpack__()  # producers of the DLPack 0.x protocol
        copied = bool(copy)
    r = _core._from_dlpack(capsule, x)
    return r._copy("K") if copied else r


# ---------------------------------------------------------------- array API, copies
def __array_namespace__(self, /, *, api_version=None):
    """Array API: npc itself is the namespace of npc arrays.

    Raises ValueError for an `api_version` the standard does not define.
    """
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"Version \"{api_version}\" of the Array API Standard is not supported.")
    return sys.modules["npc"]


def _device(self):
    """The array's device: "cpu" (array API ``x.device``)."""
    return "cpu"


def to_device(self, device, /, *, stream=None):
    """Array API ``x.to_device``: the array itself for "cpu"; ValueError otherwise."""
    if type(device) is not str:
        raise TypeError("to_device() argument 1 must be str, not " + ("None" if device is None else type(device).__name__))
    if device != "cpu":
        raise ValueError(f"Unsupported device: {device}. Only 'cpu' is accepted.")
    if stream is not None:
        raise ValueError("The stream argument in to_device() is not supported")
    return self


def setflags(self, write=None, align=None, uic=None):
    """numpy.ndarray.setflags: WRITEABLE can be changed (ValueError when the base forbids
    it); ALIGNED and WRITEBACKIFCOPY only to their current values."""
    if _core._scalar_result(self):
        self = self._copy("A")  # a NumPy scalar's temporary: Note [writes into scalar results]
    if write is not None:
        self.flags.writeable = write
    if align is not None:
        self.flags.aligned = align
    if uic is not None:
        if uic:
            raise ValueError("cannot set WRITEBACKIFCOPY flag to True")


# ---------------------------------------------------------------- NumPy subclasses
_GUARD_NAMES = {}  # id(native function) -> qualified name counted in fallback_stats


def _subclass_call(numpy_fn, native, args, kwargs, error):
    """A guarded npc function met a numpy.ndarray subclass or a NumPy destination (`error`
    None), or raised the argument error `error`: NumPy's public function runs with the
    caller's arguments (Notes [subclass guard], [argument errors] in csrc/bind_interop.cpp)."""
    if error is None:
        return call(_GUARD_NAMES[id(native)], numpy_fn, args, kwargs)
    from ._config import config
    if config.strict_fallback or _any_callable(args) or _any_callable(kwargs.values()) or \
            _scalar_result_destination(native, args, kwargs):
        raise error
    try:
        return call(_GUARD_NAMES[id(native)], numpy_fn, args, kwargs, count_errors=False)
    except Exception as e:  # noqa: BLE001 (NumPy's error, whatever its type, is the answer)
        raise e.with_traceback(None) from None


def _scalar_result_destination(native, args, kwargs):
    """Whether a destination argument (out=, copyto's dst, ...) is a scalar result: NumPy
    would see a 0-d array view of it, not the NumPy scalar it stands for, and write into it,
    so npc's error stands (Note [writes into scalar results] in csrc/bind_ndarray.cpp)."""
    for pos, name in _destinations(_GUARD_NAMES[id(native)].rpartition(".")[2], native):
        v = args[pos] if 0 <= pos < len(args) else kwargs.get(name)
        if _core._scalar_result(v) or (type(v) is tuple and any(_core._scalar_result(o) for o in v)):
            return True
    return False


def _any_callable(values):
    for v in values:
        if callable(v) and not isinstance(v, (type, ndarray, _NP_NDARRAY, _np.ufunc)):
            return True
    return False


# Functions that write into an argument other than out=: its name.
_DESTINATION_PARAMS = {"copyto": "dst", "put": "a", "place": "arr", "fill_diagonal": "a", "putmask": "a",
                       "put_along_axis": "arr"}


def _destinations(name, fn):
    """[(position or -1, name)] of `fn`'s destination parameters (out=, copyto's dst, ...)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    wanted = {"out", _DESTINATION_PARAMS.get(name)}
    r = []
    for i, p in enumerate(params):
        if p.name in wanted:
            positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            r.append((i if positional else -1, p.name))
    return r


# Note [subclass results of functions]
# NumPy's public functions give results of the class of their npc.ndarray-subclass arguments
# by how each is built: through ufuncs and ufunc.reduce (the class of the argument of highest
# __array_priority__, by its __array_wrap__; reductions to 0-d too), through the methods of
# the argument or `asanyarray` (the class kept), or through `asarray` and C functions that
# make new base-class arrays. One rule per function, from NumPy's behaviour with a subclass of
# numpy.ndarray (tests/python/test_ndarray_subclass_functions.py compares them), applied by
# the subclass guard to the native function's results when an argument is an instance of a
# Python subclass of npc.ndarray (_subclass_result):
#   "wrap0d"  arrays and NumPy scalars (as 0-d arrays) take the class (reductions);
#   "wrap"    arrays take the class, scalars stay scalars;
#   "base"    instances of the class become base-class views (asarray, copy, broadcast_to);
#   "dot"     the class of the operand of higher priority, the first on ties (numpy.dot's
#             PyArray_MatrixProduct2), for array results;
#   a tuple   one rule per item of a tuple result;
#   callable  rule(args, kwargs) gives the rule (round: by its decimals; unique: by what it
#             returns).
# Functions without a rule return what the native function returns (new base-class arrays,
# or views that keep the class as NumPy's views do). A result that is an argument (out=) is
# left alone, but for "base" (asarray(r) is a new base-class view of r). numpy.matmul, vecdot,
# matvec and vecmat are ufuncs: npc's functions wrap their results as ufuncs do (_linalg.py).
def _round_rule(args, kwargs):
    """numpy.round keeps the class when it goes through rint (decimals 0, integers with
    decimals >= 0, complex); other decimals build a new base-class array."""
    a = args[0] if args else kwargs.get("a")
    d = args[1] if len(args) > 1 else kwargs.get("decimals", 0)
    kind = getattr(getattr(a, "dtype", None), "kind", "f")
    if kind == "c" or d == 0 or (kind in "iu" and d > 0):
        return "wrap"
    return "base"


def _unique_rule(args, kwargs):
    """numpy.unique: the unique values and their first indices keep the class; the inverse
    indices and the counts are new base-class arrays."""
    flags = [bool(args[i]) if len(args) > i else bool(kwargs.get(k, False))
             for i, k in ((1, "return_index"), (2, "return_inverse"), (3, "return_counts"))]
    if not any(flags):
        return "wrap"
    return ("wrap",) + tuple(r for r, f in zip(("wrap", "base", "base"), flags) if f)


# The reductions of the op table (sum, prod, max, min, any, all): ufunc.reduce in NumPy.
_TABLE_REDUCTIONS = tuple(row.name for row in _core.op_table() if row.kind == 1)
_RESULT_RULES = {"npc." + n: "wrap0d" for n in _TABLE_REDUCTIONS + (
    "mean", "amax", "amin", "var", "std", "median", "nansum", "nanmean", "nanmax", "nanmin", "nanmedian",
    "nanstd", "nanvar", "nanprod", "trapezoid", "ptp", "average", "vecdot", "matmul")}
_RESULT_RULES.update({"npc." + n: "wrap" for n in (
    "argmax", "argmin", "nanargmax", "nanargmin", "count_nonzero", "percentile", "quantile",
    "nanpercentile", "nanquantile", "trace", "sort", "argsort", "partition", "cumsum", "cumprod", "nancumsum",
    "nancumprod", "cumulative_sum", "cumulative_prod", "zeros_like", "ones_like", "empty_like", "full_like",
    "unique_values", "clip", "roll", "repeat", "take", "kron", "linspace", "nan_to_num", "gradient", "insert",
    "delete", "compress", "extract", "polyval", "i0", "piecewise", "diagflat", "setdiff1d", "matvec", "vecmat",
    "require", "diff", "ediff1d", "tile")})
_RESULT_RULES.update({"npc." + n: "base" for n in (
    "copy", "array", "asarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "broadcast_to",
    "broadcast_arrays", "sort_complex", "concatenate", "stack", "where", "outer", "tensordot", "cross", "diag",
    "triu", "tril", "cov", "corrcoef", "interp", "convolve", "append", "pad", "resize", "lexsort", "select",
    "choose", "column_stack", "dstack", "hstack", "vstack", "block", "argwhere", "flatnonzero", "sinc",
    "unwrap", "bincount", "digitize")})
_RESULT_RULES.update({"npc.dot": "dot", "npc.round": _round_rule, "npc.around": _round_rule, "npc.unique": _unique_rule,
                      "npc.unique_counts": ("wrap", "base"), "npc.unique_inverse": ("wrap", "base"),
                      "npc.unique_all": ("wrap", "wrap", "base", "base")})
_RESULT_RULES.update({"npc.linalg." + n: "wrap" for n in (
    "inv", "solve", "matrix_power", "pinv", "cholesky", "qr", "tensorsolve", "multi_dot", "diagonal")})
_RESULT_RULES.update({"npc.linalg.matmul": "wrap0d", "npc.linalg.vecdot": "wrap0d", "npc.linalg.svd": ("wrap", "base", "wrap"),
                      "npc.linalg.eigh": ("base", "wrap"), "npc.linalg.eig": ("base", "wrap"),
                      "npc.linalg.tensorinv": "base", "npc.linalg.eigvals": "base", "npc.linalg.svdvals": "base",
                      "npc.linalg.cross": "base"})


def result_rule(qualname, fn=None):
    """The rule for the results of npc function `qualname` ("npc.sum"), or of NumPy callable
    `fn` run as a fallback: ufuncs and their methods wrap (reduce to 0-d too)."""
    rule = _RESULT_RULES.get(qualname)
    if rule is None and fn is not None:
        owner = getattr(fn, "__self__", fn)
        if isinstance(owner, _np.ufunc):
            rule = "wrap0d" if fn is owner or fn.__name__ == "reduce" else "wrap"
    return rule


def _subclass_result(rule, result, args, kwargs):
    """NumPy's class for the result of a function called with an instance of a Python
    subclass of npc.ndarray (Note [subclass results of functions])."""
    if callable(rule):
        rule = rule(args, kwargs)
    if kwargs.get("out") is not None:
        return result
    if kwargs.get("subok") is not None and rule in ("wrap", "base"):
        rule = "wrap" if kwargs["subok"] else "base"  # copy, array, *_like, broadcast_to, require
    inputs = []
    for v in list(args) + list(kwargs.values()):
        if type(v) in (list, tuple):
            for w in v:
                inputs.extend(w if type(w) in (list, tuple) else (w,))
        else:
            inputs.append(v)
    if rule != "base":
        for x in inputs:
            if result is x:
                return result  # a destination (out= given by position), or the argument itself
    return _apply_result_rule(rule, result, inputs)


def _apply_result_rule(rule, result, inputs):
    from ._array import _subclass_wrapper, _wrap_result
    if isinstance(rule, tuple):
        if not isinstance(result, tuple):
            return result
        items = [_apply_result_rule(r, x, inputs) for r, x in zip(rule, result)] + list(result[len(rule):])
        return type(result)(items) if type(result) is tuple else type(result)(*items)
    if rule == "base":
        if isinstance(result, (tuple, list)):
            items = [_apply_result_rule(rule, x, inputs) for x in result]
            return type(result)(items) if type(result) in (tuple, list) else type(result)(*items)
        if isinstance(result, ndarray) and type(result) is not ndarray:
            return result.view(ndarray)
        return result
    if rule == "dot":
        if len(inputs) < 2:
            return result
        a, b = inputs[:2]
        prio = ndarray.__array_priority__
        pa = getattr(a, "__array_priority__", prio) if isinstance(a, ndarray) else prio
        pb = getattr(b, "__array_priority__", prio) if isinstance(b, ndarray) else prio
        best = b if pb > pa else a
        if not isinstance(best, ndarray) or type(best) is ndarray:
            return result
        return _wrap_result(result, best, False)
    best = _subclass_wrapper(inputs)
    if best is None:
        return result
    return _wrap_result(result, best, rule == "wrap0d")


def guard_subclasses(namespace, numpy_module, qualname):
    """Wraps the native public functions of an npc module (`namespace`, its dict) that
    mirror a function of `numpy_module`, so that calls with instances of numpy.ndarray
    subclasses (masked arrays, matrix, memmap, user subclasses) run on NumPy and give NumPy's
    results and types (Note [NumPy subclasses] in npc/_array.py)."""
    for name, fn in list(namespace.items()):
        if name.startswith("_") or type(fn) is not types.FunctionType or id(fn) in _FALLBACK_IDS:
            continue
        if not (getattr(fn, "__module__", "") or "").startswith("npc"):
            continue
        np_fn = getattr(numpy_module, name, None)
        # (NumPy's matmul, vecdot, matvec and vecmat are ufuncs; npc's are functions, guarded
        # like the others, which also gives npc.matmul its fast call: Note [fast products].)
        if np_fn is None or isinstance(np_fn, type) or not callable(np_fn):
            continue
        _GUARD_NAMES[id(fn)] = f"{qualname}.{name}"
        g = _core._subclass_guard(fn, np_fn, _subclass_call, _destinations(name, fn),
                                  _RESULT_RULES.get(f"{qualname}.{name}"), _subclass_result)
        g.__module__ = qualname  # pickled by reference to its public name
        _core._guard_fast_path(g, f"{qualname}.{name}")  # Note [fast products] in csrc/bind_linalg.cpp
        namespace[name] = g


def guard_method_destinations(cls):
    """Wraps the methods of npc.ndarray that take ``out=`` (a.sum(out=...), a.cumsum, ...):
    a NumPy ``out`` array (unaligned, byte-swapped or of another dtype included) is written
    by NumPy's method on a zero-copy view, which returns the caller's object, as NumPy does."""
    for name, fn in list(vars(cls).items()):
        if name.startswith("_") or type(fn) is not types.FunctionType:
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if "out" not in params:
            continue
        setattr(cls, name, _out_guarded_method(name, fn, params.index("out") - 1))


# Methods whose results NumPy builds through ufuncs (or as new arrays of the class), so that a
# subclass instance gets a result of its class, 0-d included (Note [ndarray subclasses]).
_SUBCLASS_RESULT_METHODS = _TABLE_REDUCTIONS + ("mean", "cumsum", "cumprod", "clip", "round", "argmax", "argmin",
                                                "dot", "var", "std", "take", "compress", "conj", "conjugate",
                                                "trace", "repeat", "diagonal", "choose")


def guard_subclass_results(cls):
    """Wraps the methods of npc.ndarray listed in _SUBCLASS_RESULT_METHODS: called on an
    instance of a Python subclass, the result takes the subclass through __array_wrap__."""
    from ._array import _wrap_ufunc_result
    for name in _SUBCLASS_RESULT_METHODS:
        fn = vars(cls).get(name)
        if fn is None or not callable(fn):
            continue
        setattr(cls, name, _subclass_result_method(name, fn, _wrap_ufunc_result))


# Of those, the reductions NumPy runs through ufunc.reduce keep the class for 0-d results too;
# the others give scalars for 0-d results (argmax, dot of vectors, take of one index).
_SUBCLASS_0D_METHODS = frozenset(_TABLE_REDUCTIONS + ("mean", "var", "std"))


def _subclass_result_method(name, fn, wrap_result):
    keep_0d = name in _SUBCLASS_0D_METHODS

    def method(self, *args, **kwargs):
        r = fn(self, *args, **kwargs)
        if type(self) is ndarray or kwargs.get("out") is not None or any(r is a for a in args):
            return r
        if name == "round" and _round_rule((self,) + args, kwargs) == "base":
            # NumPy rounds to nonzero decimals into a new base-class array.
            return r.view(ndarray) if isinstance(r, ndarray) and type(r) is not ndarray else r
        if not keep_0d and not isinstance(r, ndarray):
            return r
        return wrap_result(r, (self,))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(fn, "__doc__", None)
    method.__wrapped__ = fn
    return method


def _out_guarded_method(name, fn, pos):
    qualname = "ndarray." + name

    def method(self, *args, **kwargs):
        if not kwargs and len(args) <= pos:
            return fn(self, *args)  # no out= given
        out = kwargs.get("out") if "out" in kwargs else (args[pos] if 0 <= pos < len(args) else None)
        if out is not None and (isinstance(out, _NP_NDARRAY) or
                                (type(out) is tuple and any(isinstance(o, _NP_NDARRAY) for o in out))):
            record(qualname)
            return getattr(_to_numpy_view(self), name)(*to_numpy(args), **to_numpy(kwargs))
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    method.__wrapped__ = fn
    return method


def install(namespace):
    """Installs the protocols on npc.ndarray (namespace: npc's module dict)."""
    global _ns
    _ns = namespace
    # The C++ fast path of __array_function__ (python/npc/csrc/bind_ops.cpp) shares the routes.
    _core._set_array_function_helpers(_FUNC_ROUTES, _route, _FALLBACK_IDS, _array_function_failed)
    ndarray.__array_ufunc__ = __array_ufunc__
    ndarray.__array_function__ = __array_function__
    ndarray.__array__ = __array__
    ndarray.__dlpack__ = __dlpack__
    ndarray.__dlpack_device__ = __dlpack_device__
    ndarray.__array_namespace__ = __array_namespace__
    if "device" not in vars(ndarray):
        ndarray.device = property(_device)
    if "to_device" not in vars(ndarray):
        ndarray.to_device = to_device
    if "setflags" not in vars(ndarray):
        ndarray.setflags = setflags  # a NumPy view's flags would not reach the npc array
    if "__class_getitem__" not in vars(ndarray):
        # Typing: npc.ndarray[Any, npc.dtype[npc.float64]], as numpy.ndarray[...].
        ndarray.__class_getitem__ = classmethod(lambda cls, item: types.GenericAlias(cls, item))
