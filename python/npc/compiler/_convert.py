"""Conversions between NumPy arrays and npc arrays on a compiled function's calls, and the
"npc" eager mode's arguments and results (Note [eager npc calls])."""
import numpy as _np

from .. import _core
from ._guards import _numpy_only

_NDARRAY = _core.ndarray
_MISSING = object()


def _from_numpy(x):
    """npc array over NumPy array `x`'s memory (npc._array's conversion)."""
    from .._array import _from_numpy as f
    return f(x)


def _view_of(x):
    """npc view of NumPy array `x` on a call's hot path: _core's conversion (a tenth of
    _from_numpy's cost, a few microseconds per argument and call), else _from_numpy's for
    the arrays it leaves (unaligned, byte-swapped)."""
    v = _core._from_numpy(x)
    return v if v is not None else _from_numpy(x)


# Note [eager npc calls]
# The "npc" eager mode of Note [slow graph breaks] calls the function with npc views
# (zero-copy) of its NumPy array arguments, the top-level ones that tracing would bind (not
# those left to NumPy, Note [arguments that stay NumPy]); the NumPy calls in its body then
# reach npc through __array_ufunc__ and __array_function__ as they do for tracer arrays, and
# writes into an argument land in the caller's memory. The result is given back as NumPy's
# would be: npc arrays in it (in tuples, lists and dicts) as numpy.ndarray views, an argument
# returned as is as the caller's own object, a view of an argument as NumPy's view of the
# caller's array (its base NumPy's, not a buffer), and `np.asarray(a)` of an argument (a
# NumPy array over the npc view's buffer) as `a` itself, as NumPy returns it. Offered only
# when some argument is such a NumPy array and none is an npc array (then the function as it
# is runs npc already), and not for functions that change a list or dict argument (npc
# arrays would be left in the caller's containers).
def _npc_view_args(args, kwargs):
    """(args, kwargs, originals) with the NumPy arrays among them as npc views, originals
    mapping id(view) -> (view, array); None when there is no such array, or an npc array."""
    from .._dtypes import code_of
    originals = {}

    def one(a):
        if type(a) is _np.ndarray:
            if a.dtype.isnative and code_of(a.dtype) is not None and not _numpy_only(a):
                v = _view_of(a)
                originals[id(v)] = (v, a)
                return v
        elif isinstance(a, _NDARRAY):
            raise LookupError
        return a
    try:
        new_args = tuple(one(a) for a in args)
        new_kwargs = {k: one(v) for k, v in kwargs.items()}
    except LookupError:
        return None
    return (new_args, new_kwargs, originals) if originals else None


def _converted_npc(x):
    """The npc array a NumPy array `x` is the buffer conversion of (`np.asarray(t)` of an
    npc array `t`: the whole of `t`, a memoryview of it as base), or None."""
    b = x.base
    if type(b) is not memoryview:
        return None
    t = b.obj
    if (isinstance(t, _NDARRAY) and x.shape == t.shape and x.strides == t.strides and x.dtype == t.dtype
            and x.__array_interface__["data"][0] == t.__array_interface__["data"][0]):
        return t
    return None


def _argument_owning(r, originals):
    """The NumPy argument whose npc view `r` is, or whose memory `r` views, or None."""
    o = originals.get(id(r))
    if o is not None and o[0] is r:
        return o[1]
    base = r.base
    if base is not None:
        for _, a in originals.values():
            if base is a or base is a.base:
                return a
    return None


def _numpy_result(r, originals, depth=0):
    """The result of an "npc" eager call as NumPy's (Note [eager npc calls])."""
    if type(r) is _np.ndarray:
        t = _converted_npc(r)
        if t is not None:
            r = t  # np.asarray(a) of an argument is the argument itself in NumPy
        elif type(r.base) is _np.ndarray:
            t = _converted_npc(r.base)  # a NumPy view of such a conversion (`np.asarray(a)[1:]`)
            a = _argument_owning(t, originals) if t is not None else None
            return r if a is None else _core._alias_of(a, _from_numpy(r), bool(r.flags.writeable))
    if isinstance(r, _NDARRAY):
        o = originals.get(id(r))
        if o is not None and o[0] is r:
            return o[1]
        a = _argument_owning(r, originals)
        if a is not None:  # a view of an argument: NumPy's view of it, with NumPy's base
            return _core._alias_of(a, r, bool(r.flags.writeable))
        from .._array import _numpy_view
        return _numpy_view(r)
    if depth < 8:
        if type(r) is tuple or type(r) is list:
            return type(r)(_numpy_result(x, originals, depth + 1) for x in r)
        if type(r) is dict:
            return {k: _numpy_result(v, originals, depth + 1) for k, v in r.items()}
    return r
