"""The NumPy fallback: whatever npc does not run natively runs on real NumPy.

Any public NumPy name that npc does not define natively (``npc.<name>``, and likewise in
``npc.linalg``, ``npc.fft``, ``npc.random``, ``npc.lib``, ``npc.char``, ``npc.ma``,
``npc.polynomial``, ``npc.testing`` and every other NumPy submodule) resolves to a wrapper
that

1. converts npc arrays in the arguments (also inside lists, tuples and dicts) to NumPy
   arrays without copying (:func:`to_numpy`),
2. calls NumPy's function, and
3. converts NumPy arrays of native dtypes in the result back to npc arrays without copying
   (:func:`from_numpy`); anything else (NumPy scalars, arrays of strings or datetimes,
   masked arrays, Python objects) is returned as NumPy returned it.

Methods and attributes of ``numpy.ndarray`` that ``npc.ndarray`` does not define natively
are installed on the class by :func:`install_methods` and fall back the same way.

Each fallback is counted (:func:`fallback_stats`), logged once per name under
``NPC_LOGS=fallback``, and raises :class:`FallbackError` when
``npc.config.strict_fallback`` is set.

Native replaces fallback name by name: a layer that defines ``npc.linalg.solve`` (or
``npc.ndarray.sum``) natively is used from then on, and the protocol routing
(``npc._interop``) picks it up without registration. A native function that meets
arguments it does not handle raises :class:`NotNative`; the protocol routing then runs
NumPy instead (counted and logged as a fallback).
"""
import functools
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import numpy as _np

from . import _core
from ._array import ndarray
from ._config import config
from ._logging import log_once

__all__ = ["FallbackError", "NotNative", "fallback_stats", "reset_fallback_stats"]

_NP_NDARRAY = _np.ndarray
_NP_UFUNC = _np.ufunc
_to_numpy_view = _core._to_numpy
_stats = {}
# Every fallback object made here (wrappers and ufunc proxies), by id: the protocol routing
# asks "is npc's object of this name native?" with one set lookup. _FALLBACK_OBJECTS keeps
# them alive, so an id is never reused by a native object.
_FALLBACK_IDS = set()
_FALLBACK_OBJECTS = []


def _mark_fallback(obj):
    _FALLBACK_OBJECTS.append(obj)
    _FALLBACK_IDS.add(id(obj))


class FallbackError(RuntimeError):
    """Raised instead of running an operation on NumPy when ``npc.config.strict_fallback``
    is set (the message names the NumPy function)."""


class NotNative(NotImplementedError):
    """Raised by a native npc function for arguments it does not handle; the caller (the
    protocol routing, or the function itself through :func:`call`) then runs NumPy."""


def fallback_stats():
    """Number of calls served by NumPy since start (or :func:`reset_fallback_stats`).

    Returns
    -------
    dict
        ``{qualified name: count}``, e.g. ``{"npc.linalg.solve": 2, "ndarray.sum": 1}``.
    """
    return dict(_stats)


def reset_fallback_stats():
    """Clears the counts of :func:`fallback_stats`."""
    _stats.clear()


def record(name):
    """Counts one fallback of `name`, logs it once, or raises FallbackError when strict."""
    if config.strict_fallback:
        raise FallbackError(f"npc: '{name}' would run on NumPy, but npc.config.strict_fallback is set")
    n = _stats.get(name)
    if n is None:
        _stats[name] = 1
        log_once("fallback", name, "%s runs on NumPy", name)
    else:
        _stats[name] = n + 1


# ---------------------------------------------------------------- conversion
# Conversions are C++ (npc/csrc/bind_interop.cpp): they run on every fallback call.
# to_numpy(x): npc arrays in `x` (also inside lists, tuples, dicts) as zero-copy NumPy
# arrays, anything else as is; a container is rebuilt only when it holds an npc array (so
# NumPy functions that mutate a list argument still see the caller's list).
# from_numpy(x): NumPy arrays of native dtypes in `x` (also inside tuples, named tuples
# and lists) as zero-copy npc arrays; everything else as is (NumPy scalars stay NumPy
# scalars, as NumPy's eager results are).
to_numpy = _core._to_numpy_tree
from_numpy = _core._from_numpy_tree
_call_numpy = _core._call_numpy


def _restore_outputs(result, out, out_np):
    """NumPy returned the NumPy views of npc `out` arrays: hand back the npc objects."""
    if type(out) is tuple:
        if type(result) is tuple and len(result) == len(out):
            return tuple(o if r is v else from_numpy(r) for r, o, v in zip(result, out, out_np))
        if len(out) == 1 and result is out_np[0]:
            return out[0]
    elif result is out_np:
        return out
    return from_numpy(result)


def call(name, fn, args, kwargs, *, count_errors=True):
    """Runs NumPy's `fn` on converted arguments (counted as a fallback of `name`). Results
    for instances of Python subclasses of npc.ndarray take the class NumPy gives them (Note
    [subclass results of functions] in _interop.py).

    ``count_errors=False`` counts the call only when NumPy returns: a call that NumPy rejects
    too (an argument error npc already found) was not served by NumPy.
    """
    if count_errors:
        record(name)
    out = kwargs.get("out") if kwargs else None
    if out is not None:
        # NumPy hands back its `out` views: return the caller's own objects.
        np_kwargs = to_numpy(kwargs)
        r = _restore_outputs(fn(*to_numpy(args), **np_kwargs), out, np_kwargs["out"])
        if not count_errors:
            record(name)
        return r
    r = _call_numpy(fn, args, kwargs)
    if not count_errors:
        record(name)
    if _holds_npc_subclass(args) or (kwargs and _holds_npc_subclass(kwargs.values())):
        from ._interop import _subclass_result, result_rule
        rule = result_rule(name, fn)
        if rule is not None:
            return _subclass_result(rule, r, args, kwargs)
    return r


def _holds_npc_subclass(values):
    """An instance of a Python subclass of npc.ndarray among `values` (or their list/tuple items)."""
    for v in values:
        t = type(v)
        if t in (list, tuple):
            if _holds_npc_subclass(v):
                return True
        elif t is not ndarray and isinstance(v, ndarray):
            return True
    return False


def wrap_function(name, fn):
    """A function with `fn`'s name, signature and docstring that runs it through the
    fallback (counted as `name`, the qualified npc name: "npc.linalg.solve")."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return call(name, fn, args, kwargs)
    wrapper.__module__, _, wrapper.__qualname__ = name.rpartition(".")
    wrapper.__npc_fallback__ = fn
    _mark_fallback(wrapper)
    return wrapper


class FallbackUfunc:
    """A NumPy ufunc that npc does not run natively, called through the fallback.

    Calls and the methods ``reduce``, ``accumulate``, ``reduceat``, ``outer`` and ``at``
    convert npc arguments to NumPy and results back; every other attribute (``nin``,
    ``nout``, ``identity``, ``types``, ``signature``, ...) is NumPy's ufunc's.
    """

    def __init__(self, name, ufunc):
        self._ufunc = ufunc
        self._name = name
        self.__name__ = ufunc.__name__
        self.__qualname__ = ufunc.__name__
        self.__doc__ = ufunc.__doc__
        self.__npc_fallback__ = ufunc
        _mark_fallback(self)

    def __call__(self, *args, **kwargs):
        uf = self._ufunc
        if len(args) > uf.nin and "out" not in kwargs:
            # Positional outputs: give NumPy their views, return the npc objects.
            outs = args[uf.nin:]
            kwargs = dict(kwargs, out=outs if len(outs) > 1 or uf.nout > 1 else outs[0])
            args = args[:uf.nin]
        return call(self._name, uf, args, kwargs)

    def reduce(self, *args, **kwargs):
        return call(self._name + ".reduce", self._ufunc.reduce, args, kwargs)

    def accumulate(self, *args, **kwargs):
        return call(self._name + ".accumulate", self._ufunc.accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs):
        return call(self._name + ".reduceat", self._ufunc.reduceat, args, kwargs)

    def outer(self, *args, **kwargs):
        return call(self._name + ".outer", self._ufunc.outer, args, kwargs)

    def at(self, *args, **kwargs):
        return call(self._name + ".at", self._ufunc.at, args, kwargs)

    def resolve_dtypes(self, *args, **kwargs):
        return self._ufunc.resolve_dtypes(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._ufunc, name)

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def __reduce__(self):
        return (_resolve_qualified, (self._name,))


def _resolve_qualified(qualname):
    """Object of a qualified npc name ("npc.linalg.solve"); used to unpickle wrappers."""
    mod, _, attr = qualname.rpartition(".")
    return getattr(importlib.import_module(mod), attr)


# ---------------------------------------------------------------- namespaces
# npc mirrors NumPy's submodules: npc.linalg, fft, random, lib, char, ma, polynomial and
# testing are real packages (python/npc/<name>/) where native functions replace fallback
# ones name by name; any other NumPy submodule is made on first import by _MirrorFinder.
def fallback_value(npc_modname, np_obj, name):
    """What ``npc_module.<name>`` is when npc does not define it: a :class:`FallbackUfunc`
    for ufuncs, the npc mirror of NumPy submodules, a fallback wrapper for every other
    callable that is not a class, and NumPy's own object for classes (so ``isinstance``
    works), dtypes, constants and anything else."""
    qual = f"{npc_modname}.{name}"
    if isinstance(np_obj, _NP_UFUNC):
        return FallbackUfunc(qual, np_obj)
    if isinstance(np_obj, types.ModuleType):
        sub = np_obj.__name__
        if sub == "numpy" or (sub.startswith("numpy.") and "._" not in sub):
            return importlib.import_module("npc" + sub[5:])
        return np_obj
    if callable(np_obj) and not isinstance(np_obj, type):
        return wrap_function(qual, np_obj)
    return np_obj


def _numpy_module_of(npc_modname):
    return importlib.import_module("numpy" + npc_modname[3:])


# Dunder names of NumPy's namespace that are public API (everything else dunder is Python's).
_DUNDER_FALLBACKS = frozenset({"__array_namespace_info__"})


def install(namespace, npc_modname=None, numpy_module=None):
    """Module-level ``__getattr__``/``__dir__`` (PEP 562) for an npc module whose globals
    are `namespace`: NumPy's names that the module does not define natively resolve
    through :func:`fallback_value` (and are cached in the module), and ``dir()`` lists
    NumPy's namespace too.

    Usage, at the end of ``npc/<sub>/__init__.py``::

        __getattr__, __dir__ = _fallback.install(globals())
    """
    if npc_modname is None:
        npc_modname = namespace["__name__"]
    if numpy_module is None:
        numpy_module = _numpy_module_of(npc_modname)

    def __getattr__(name):
        if name.startswith("__") and name.endswith("__") and name not in _DUNDER_FALLBACKS:
            raise AttributeError(f"module '{npc_modname}' has no attribute '{name}'")
        try:
            obj = getattr(numpy_module, name)
        except AttributeError:
            raise AttributeError(f"module '{npc_modname}' has no attribute '{name}'") from None
        value = fallback_value(npc_modname, obj, name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(dir(numpy_module)))

    return __getattr__, __dir__


class _MirrorFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of NumPy submodules that npc has no package for (``import npc.emath``,
    ``from npc.lib.stride_tricks import as_strided``) give a module whose every name falls
    back. It is last on ``sys.meta_path``, so real npc modules always win."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("npc.") or fullname.startswith(("npc._", "npc.compiler")) \
                or "._" in fullname:
            return None
        try:
            np_mod = importlib.import_module("numpy" + fullname[3:])
        except ImportError:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(np_mod, "__path__"))

    def create_module(self, spec):
        np_mod = _numpy_module_of(spec.name)
        mod = types.ModuleType(spec.name, np_mod.__doc__)
        mod.__getattr__, mod.__dir__ = install(mod.__dict__, spec.name, np_mod)
        if hasattr(np_mod, "__all__"):
            mod.__all__ = list(np_mod.__all__)
        mod.__npc_fallback__ = np_mod
        return mod

    def exec_module(self, module):
        pass


if not any(type(f).__name__ == "_MirrorFinder" for f in sys.meta_path):
    sys.meta_path.append(_MirrorFinder())


def is_fallback(obj):
    """True when `obj` is a fallback wrapper made here (not a native npc object)."""
    return id(obj) in _FALLBACK_IDS


# ---------------------------------------------------------------- ndarray methods
# Names of numpy.ndarray that npc's protocols or Python's object model handle themselves.
_SKIP_METHODS = frozenset({
    "__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__", "__init_subclass__",
    "__subclasshook__", "__class__", "__doc__", "__hash__", "__dir__", "__sizeof__", "__reduce_ex__",
    "__setstate__", "__class_getitem__", "__buffer__", "__release_buffer__", "__array_ufunc__",
    "__array_function__", "__array_wrap__", "__array_finalize__", "__array_prepare__",
    "__array_priority__", "__array_struct__", "__array_interface__", "__dlpack__",
    "__dlpack_device__", "__array_namespace__", "__module__", "__getstate__",
})
# In-place operators: the ufuncs' (the third name of the op table's dunders column) and @=.
_INPLACE = frozenset([row.dunders[2] for row in _core.op_table() if len(row.dunders) == 3] + ["__imatmul__"])


def _make_method(name):
    qual = "ndarray." + name
    np_method = getattr(_NP_NDARRAY, name)

    if name in _INPLACE:
        def method(self, other):
            record(qual)
            np_method(_to_numpy_view(self), to_numpy(other))  # writes through the shared view
            return self
    elif name == "__setitem__":
        def method(self, key, value):
            record(qual)
            np_method(_to_numpy_view(self), to_numpy(key), to_numpy(value))
    else:
        def method(self, *args, **kwargs):
            record(qual)
            if _core._scalar_result(self):
                # NumPy's scalar runs the method, with its own errors (byteswap(inplace=True),
                # setfield) and on its own temporaries: Note [writes into scalar results] in
                # python/npc/csrc/bind_ndarray.cpp.
                r = getattr(_to_numpy_view(self)[()], name)(*to_numpy(args), **to_numpy(kwargs))
                return from_numpy(r)
            view = _to_numpy_view(self)
            if kwargs:
                np_kwargs = to_numpy(kwargs)
                out = kwargs.get("out")
                if out is not None:
                    return _restore_outputs(np_method(view, *to_numpy(args), **np_kwargs), out,
                                            np_kwargs["out"])
                r = np_method(view, *to_numpy(args), **np_kwargs)
            else:
                r = np_method(view, *to_numpy(args))
            # NumPy returned the array itself (astype(copy=False), ...): so does npc.
            return self if r is view else from_numpy(r)
    method.__name__ = name
    method.__qualname__ = "ndarray." + name
    method.__doc__ = getattr(np_method, "__doc__", None)
    method.__npc_fallback__ = np_method
    _mark_fallback(method)
    return method


def _make_property(name, descr):
    qual = "ndarray." + name

    def fget(self):
        record(qual)
        if _core._scalar_result(self):  # the NumPy scalar's (`x.flat` iterates a temporary)
            return from_numpy(getattr(_to_numpy_view(self)[()], name))
        return from_numpy(descr.__get__(_to_numpy_view(self), _NP_NDARRAY))

    def fset(self, value):
        record(qual)
        if _core._scalar_result(self):  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
            raise AttributeError(f"attribute '{name}' of 'numpy.generic' objects is not writable")
        descr.__set__(_to_numpy_view(self), to_numpy(value))

    # Only `flat` is writable through a view; setting shape/strides/dtype would change a
    # temporary NumPy view, not the npc array, so those stay read-only (AttributeError).
    prop = property(fget, fset if name == "flat" else None, doc=getattr(descr, "__doc__", None))
    _mark_fallback(prop)
    return prop


def _native_names(cls):
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__ == "pybind11_builtins":
            continue
        names.update(vars(klass))
    return names


def install_methods(cls=ndarray):
    """Installs a fallback for every numpy.ndarray method and attribute that `cls` does not
    define natively (call once, after every layer has installed its native methods).

    Returns the list of names installed.
    """
    native = _native_names(cls)
    installed = []
    for name, descr in vars(_NP_NDARRAY).items():
        if name in native or name in _SKIP_METHODS:
            continue
        if isinstance(descr, (types.GetSetDescriptorType, types.MemberDescriptorType, property)):
            setattr(cls, name, _make_property(name, descr))
        elif callable(descr) or isinstance(descr, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            setattr(cls, name, _make_method(name))
        else:
            continue
        installed.append(name)
    if "__delitem__" not in native:
        def __delitem__(self, key):
            raise ValueError("cannot delete array elements")
        cls.__delitem__ = __delitem__
    return installed
