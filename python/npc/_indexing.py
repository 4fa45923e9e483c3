"""Indexing, selection, sorting and set operations (numpy.take, nonzero, sort, unique, ...).

``ndarray.__getitem__``/``__setitem__`` are implemented in C++ (src/core/indexing.cpp,
bound in csrc/bind_indexing.cpp); this module holds the Python-side helpers of key and
value conversion and the NumPy functions of this layer.
"""
import warnings

import numpy as _np

from . import _core
from ._array import _as_npc, _from_numpy, ndarray
from ._dtypes import DTYPES

__all__ = []

_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
          "boolean arrays are valid indices")


def _index_array(obj, from_sequence):
    """An npc integer/bool array for a NumPy array, NumPy bool scalar or nested sequence
    used as an index; IndexError (NumPy's text) for anything else."""
    if from_sequence:
        try:
            arr = _np.asarray(obj)
        except ValueError:
            raise IndexError(_VALID) from None
        if arr.size == 0 and arr.dtype.kind not in "iub":
            arr = arr.astype(_np.intp)
        if arr.dtype.kind not in "iub":
            raise IndexError(_VALID)
    else:
        arr = _np.asarray(obj)
        if arr.dtype.kind not in "iub":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return _from_numpy(arr)


def _setitem_value(value, code):
    """The right-hand side of ``a[key] = value`` as an npc array, converted as NumPy does:
    arrays and NumPy scalars keep their dtype (cast later, ComplexWarning when dropping an
    imaginary part); Python objects and sequences are coerced to the target dtype."""
    dtype = DTYPES[code]
    if isinstance(value, (_np.ndarray, _np.generic)):
        arr = _np.asarray(value)
        if arr.dtype.kind == "c" and dtype.kind not in "cb":
            warnings.warn("Casting complex values to real discards the imaginary part",
                          _np.exceptions.ComplexWarning, stacklevel=3)
        if isinstance(value, _np.generic) and dtype.kind in "fc" and arr.dtype.kind in "biuf":
            # NumPy's scalar setter converts the value first ("overflow encountered in cast"
            # even when the index selects nothing).
            arr = arr.astype(dtype)
        r = _from_numpy(arr)
        if not isinstance(r, ndarray):
            r = _from_numpy(arr.astype(dtype))
        return r
    return _from_numpy(_np.asarray(value, dtype=dtype))


# ---------------------------------------------------------------- selection
import operator as _operator  # noqa: E402
from collections import namedtuple as _namedtuple  # noqa: E402

from . import _fallback  # noqa: E402
from ._dtypes import code_of, result_type as _result_type  # noqa: E402
from ._shape import (_arr, _axes, _numpy, _wrap_all, broadcast_arrays, broadcast_to, concatenate, moveaxis,  # noqa: E402
                     ravel, stack)

_op = _core._shape_op

__all__ += ["take", "take_along_axis", "put", "put_along_axis", "choose", "compress", "extract", "place",
            "select", "piecewise", "nonzero", "argwhere", "flatnonzero", "diag", "diagonal", "trace", "tril",
            "triu", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "indices", "ix_",
            "meshgrid", "mgrid", "ogrid", "r_", "c_", "sort", "argsort", "lexsort", "partition", "argpartition",
            "searchsorted", "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all", "isin",
            "intersect1d", "union1d", "setdiff1d", "setxor1d", "bincount", "histogram", "histogram2d",
            "histogramdd", "histogram_bin_edges", "digitize", "fill_diagonal", "diag_indices", "diag_indices_from"]


def _int_array(x):
    a = _arr(x)
    if a is None:
        raise TypeError("index arrays must be of a native integer dtype")
    return a


def _axis(axis):
    return None if axis is None else _operator.index(axis)


def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take: elements of `a` at `indices` along `axis` (flattened `a` when None).

    Shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. IndexError for out-of-range
    indices with mode='raise'; 'wrap' and 'clip' map them into range.
    """
    x = _arr(a)
    r = _core._take(x, _int_array(indices), _axis(axis), mode)
    if out is not None:
        out[...] = r
        return out
    if r.ndim == 0:  # NumPy returns a 0-d take as a NumPy scalar
        if _core._is_traced(r):
            _core._mark_scalar(r)  # Note [scalar results] in src/tracer/trace.hpp
            return r
        return r._scalar()
    return r


def _along_axis_key(arr, indices, axis):
    if not -arr.ndim <= axis < max(arr.ndim, 0) or arr.ndim == 0:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {arr.ndim}")
    axis %= arr.ndim
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = arr.shape[d]
            key.append(_core.arange(0, arr.shape[d], 1, 7).reshape(shape))
    return tuple(key)


def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: arr[..., indices, ...] matched along `axis` (1-d when axis=None)."""
    x = _arr(arr)
    ind = _int_array(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ravel(x), 0
    axis = _operator.index(axis)
    return x[_along_axis_key(x, ind, axis)]


def put_along_axis(arr, indices, values, axis):
    """numpy.put_along_axis: arr[..., indices, ...] = values (in place)."""
    x = arr if isinstance(arr, ndarray) else _arr(arr)
    ind = _int_array(indices)
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        x, axis = ravel(x), 0
    x[_along_axis_key(x, ind, _operator.index(axis))] = values


def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v (values repeat cyclically), in place."""
    if not isinstance(a, ndarray):
        raise TypeError(f"put() argument 1 must be numpy.ndarray, not {type(a).__name__}")
    _core._put(a, _int_array(ind), _arr(_setitem_value(v, a._code) if not isinstance(v, ndarray) else v), mode)


def choose(a, choices, out=None, mode="raise"):
    """numpy.choose: result[i] = choices[a[i]][i] with all inputs broadcast together.

    ValueError "invalid entry in choice array" for out-of-range entries with mode='raise'.
    """
    idx = _int_array(a)
    if not _np.can_cast(idx.dtype, _np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the rule 'safe'")
    chs = [_arr(c) for c in choices]
    n = len(chs)
    if n == 0:
        raise ValueError("0-length sequence.")
    dt = _result_type(*chs)
    parts = broadcast_arrays(idx, *chs)
    idx, chs = parts[0], parts[1:]
    idx_np = _np.asarray(idx).astype(_np.int64)
    if mode == "raise":
        if idx_np.size and (idx_np.min() < 0 or idx_np.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx_np = idx_np % n
    elif mode == "clip":
        idx_np = _np.clip(idx_np, 0, n - 1)
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    st = stack([c.astype(dt) for c in chs], 0)
    r = take_along_axis(st, _from_numpy(idx_np[None]), 0)[0]
    if out is not None:
        out[...] = r
        return out
    return r


def compress(condition, a, axis=None, out=None):
    """numpy.compress: slices of `a` along `axis` where `condition` (1-d) is true."""
    r = _core._compress(_arr(condition), _arr(a), _axis(axis))
    if out is not None:
        out[...] = r
        return out
    return r


def extract(condition, arr):
    """numpy.extract: the elements of ravel(arr) where ravel(condition) is nonzero."""
    c = ravel(_arr(condition))
    return take(ravel(_arr(arr)), _core._nonzero(c)[0])


def place(arr, mask, vals):
    """numpy.place: arr[mask] = vals, repeating vals cyclically (in place)."""
    if not isinstance(arr, ndarray):
        raise TypeError(f"argument 1 must be numpy.ndarray, not {type(arr).__name__}")
    m = _arr(mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    m = ravel(m.astype(_np.bool_))
    cnt = _core._count_nonzero(m)
    v = ravel(_arr(_np.asarray(vals) if not isinstance(vals, ndarray) else vals))
    if v.size == 0:
        if cnt:
            raise ValueError("Cannot insert from an empty array!")
        return
    flat = ravel(arr)
    reps = -(-cnt // v.size)
    vv = concatenate([v] * reps)[:cnt] if reps > 1 else v[:cnt]
    flat[m] = vv
    if flat._storage_id != arr._storage_id:
        arr[...] = flat.reshape(arr.shape)


def select(condlist, choicelist, default=0):
    """numpy.select: the choice of the first true condition per element, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    chs = [_arr(c) for c in choicelist]
    conds = [_arr(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != _np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    dt = _result_type(*chs, default)
    parts = broadcast_arrays(*conds, *chs, _arr(default))
    shape = parts[0].shape
    res = _core.empty(shape, code_of(dt), "C")
    res[...] = parts[-1]
    n = len(conds)
    for c, v in zip(reversed(parts[:n]), reversed(parts[n:2 * n])):
        res[c] = v[c]
    return res


def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: funclist[i] (callable or constant) applied where condlist[i] holds."""
    x = _arr(x)
    n2 = len(funclist)
    # NumPy's rule: a scalar, or a condlist whose first entry is not itself a list or an
    # array (a list of bools, a 1-d bool array), is a single condition.
    if isinstance(condlist, (bool, _np.bool_)) or not isinstance(condlist, (list, tuple)) and \
            _arr(condlist).ndim == 0:
        condlist = [condlist]
    elif x.ndim != 0 and not isinstance(condlist[0], (list, ndarray, _np.ndarray)):
        condlist = [condlist]
    conds = [_arr(c) for c in condlist]
    n = len(conds)
    if n == n2 - 1:
        # The extra function applies where no condition holds.
        anyc = _np.zeros(x.shape, bool)
        for c in conds:
            anyc |= _np.asarray(broadcast_to(c, x.shape))
        conds.append(_from_numpy(~anyc))
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = _core.zeros(x.shape, x._code, "C")
    for c, f in zip(conds, funclist):
        c = broadcast_to(c, x.shape)
        if not callable(f):
            y[c] = f
        else:
            vals = x[c]
            if vals.size > 0:
                y[c] = f(vals, *args, **kw)
    return y


def nonzero(a):
    """numpy.nonzero: a tuple of int64 index arrays, one per dimension.

    ValueError for 0-d input (as NumPy 2).
    """
    x = _arr(a)
    return _core._nonzero(x)


def argwhere(a):
    """numpy.argwhere: the indices of nonzero elements as an (N, a.ndim) array."""
    x = _arr(a)
    if x.ndim == 0:
        n = 1 if bool(x._item()) else 0
        return _core.zeros((n, 0), 7, "C")
    return stack(_core._nonzero(x), 1)


def flatnonzero(a):
    """numpy.flatnonzero: indices of the nonzero elements of ravel(a)."""
    return _core._nonzero(ravel(_arr(a)))[0]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: a read-only view of the diagonals (as the last axis)."""
    return _op("diagonal", _arr(a), _operator.index(offset), _operator.index(axis1), _operator.index(axis2))


def diag(v, k=0):
    """numpy.diag: the k-th diagonal of a 2-d array (a view), or a 2-d array with `v` (1-d) on
    its k-th diagonal. ValueError for other ndims ("Input must be 1- or 2-d.")."""
    x = _arr(v)
    k = _operator.index(k)
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        res = _core.zeros((n, n), x._code, "C")
        i = _core.arange(0, x.shape[0], 1, 7)
        if k >= 0:
            res[i, _core.arange(k, k + x.shape[0], 1, 7)] = x
        else:
            res[_core.arange(-k, -k + x.shape[0], 1, 7), i] = x
        return res
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: sum along the diagonals (uses npc's sum)."""
    d = diagonal(a, offset, axis1, axis2)
    if type(d) is not ndarray and isinstance(d, ndarray):
        # NumPy's trace of a subclass instance is a scalar for 2-d input (its sum is not the
        # subclass's reduction); arrays take the class through the public function's rule.
        d = d.view(ndarray)
    return d.sum(-1, dtype=dtype, out=out)


def tril(m, k=0):
    """numpy.tril: a copy with the elements above the k-th diagonal zeroed (last two axes;
    1-d input is broadcast to a square)."""
    x = _arr(m)
    if x.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    if _core._is_tracing():
        return _tri_select(x, _operator.index(k), True)
    return _op("tril", x, _operator.index(k))


def triu(m, k=0):
    """numpy.triu: a copy with the elements below the k-th diagonal zeroed."""
    x = _arr(m)
    if x.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    if _core._is_tracing():
        return _tri_select(x, _operator.index(k), False)
    return _op("triu", x, _operator.index(k))


def _tri_select(x, k, lower):
    """tril/triu inside a compiled function: a select on an index mask (as NumPy computes
    them), which traces into the graph instead of needing concrete values."""
    from . import arange, where, zeros
    d = arange(x.shape[-1])[None, :] - arange(x.shape[-2])[:, None]
    return where(d <= k if lower else d >= k, x, zeros((), x.dtype))


def tril_indices(n, k=0, m=None):
    """numpy.tril_indices: (rows, cols) int64 arrays of the lower triangle."""
    ones = _core.full((n, n if m is None else m), True, 0, "C")
    return _core._nonzero(_op("tril", ones, _operator.index(k)))


def triu_indices(n, k=0, m=None):
    """numpy.triu_indices: (rows, cols) int64 arrays of the upper triangle."""
    ones = _core.full((n, n if m is None else m), True, 0, "C")
    return _core._nonzero(_op("triu", ones, _operator.index(k)))


def tril_indices_from(arr, k=0):
    """numpy.tril_indices_from (arr must be 2-d)."""
    x = _arr(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(x.shape[-2], k, x.shape[-1])


def triu_indices_from(arr, k=0):
    """numpy.triu_indices_from (arr must be 2-d)."""
    x = _arr(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(x.shape[-2], k, x.shape[-1])


def diag_indices(n, ndim=2):
    """numpy.diag_indices: ndim copies of arange(n)."""
    idx = _core.arange(0, n, 1, 7)
    return (idx,) * ndim


def diag_indices_from(arr):
    """numpy.diag_indices_from (all dimensions equal, ndim >= 2)."""
    x = _arr(arr)
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], x.ndim)


def fill_diagonal(a, val, wrap=False):
    """numpy.fill_diagonal: writes `val` (cycled) on the main diagonal, in place."""
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = None if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(int(_np.prod(a.shape[:i])) for i in range(1, a.ndim))
        end = None
    flat = ravel(a)
    idx = _core.arange(0, a.size if end is None else min(end, a.size), step, 7)
    v = ravel(_arr(val))
    if v.size and idx.size:
        reps = -(-idx.size // v.size)
        flat[idx] = concatenate([v] * reps)[:idx.size] if reps > 1 else v[:idx.size]
    if flat._storage_id != a._storage_id:
        a[...] = flat.reshape(a.shape)


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: the index grid of `dimensions` (stacked, or a tuple when sparse)."""
    dims = tuple(_operator.index(d) for d in dimensions)
    code = code_of(dtype)
    n = len(dims)
    out = []
    for i, d in enumerate(dims):
        shape = [1] * n
        shape[i] = d
        idx = _core.arange(0, d, 1, code).reshape(shape)
        out.append(idx if sparse else broadcast_to(idx, dims))
    if sparse:
        return tuple(out)
    if n == 0:
        return _core.empty((0,), code, "C")
    return stack(out, 0)


def ix_(*args):
    """numpy.ix_: open-mesh index arrays (booleans become their nonzero indices)."""
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        x = _arr(new)
        if x.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if x.size == 0 and not isinstance(new, ndarray):
            x = x.astype(_np.intp)
        if x.dtype == _np.bool_:
            x = _core._nonzero(x)[0]
        out.append(x.reshape((1,) * k + (x.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid: coordinate matrices ('xy' or 'ij' indexing), copies unless copy=False."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        out.append(ravel(_arr(x)).reshape(shape))
    if indexing == "xy" and ndim > 1:
        out[0] = out[0].reshape((1, -1) + (1,) * (ndim - 2))
        out[1] = out[1].reshape((-1, 1) + (1,) * (ndim - 2))
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [o.copy() for o in out]
    return tuple(out)


class _GridClass:
    """numpy.mgrid / numpy.ogrid: dense or open grids from slices (complex step = count)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        from ._creation import arange, linspace
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        axes = []
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError("mgrid/ogrid indices must be slices")
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                num = int(abs(step))
                ax = linspace(start, k.stop, num)
            else:
                ax = arange(start, k.stop, step)
            axes.append(ax)
        if single:
            return axes[0]
        dt = _result_type(*axes)
        axes = [a.astype(dt) for a in axes]
        n = len(axes)
        shaped = [a.reshape((1,) * i + (a.size,) + (1,) * (n - i - 1)) for i, a in enumerate(axes)]
        if self.sparse:
            return tuple(shaped)
        shape = tuple(a.size for a in axes)
        return stack([broadcast_to(s, shape) for s in shaped], 0)

    def __len__(self):
        return 0


mgrid = _GridClass(False)
ogrid = _GridClass(True)


class _Concatenator:
    """numpy.r_ / numpy.c_: concatenation by index syntax (slices make ranges)."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        from ._creation import arange, array, linspace
        keys = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs = []
        scalars = []
        for i, k in enumerate(keys):
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                if isinstance(step, complex):
                    newobj = linspace(start, k.stop, int(abs(step)))
                else:
                    newobj = arange(start, k.stop, step)
                if ndmin > 1:
                    newobj = _np_ndmin(newobj, ndmin, trans1d)
            elif isinstance(k, str):
                if i != 0:
                    raise ValueError("special directives must be the first entry.")
                if k in ("r", "c"):
                    return _numpy_concat(self, key)
                vals = [int(v) for v in k.split(",")]
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
                continue
            elif type(k) in (int, float, complex, bool) or isinstance(k, _np.generic):
                newobj = array(k, ndmin=ndmin)
                scalars.append(len(objs))
            else:
                newobj = array(k, copy=None, ndmin=ndmin)
                if ndmin > 1 and _arr(k).ndim < ndmin:
                    newobj = _np_ndmin(_arr(k), ndmin, trans1d)
            objs.append(newobj)
        if not objs:
            return array([])
        if scalars:
            dt = _result_type(*[o for i, o in enumerate(objs) if i not in scalars]) \
                if len(scalars) < len(objs) else _result_type(*objs)
            objs = [o.astype(dt) for o in objs]
        res = concatenate(objs, axis=axis)
        return res

    def __len__(self):
        return 0


def _np_ndmin(x, ndmin, trans1d):
    x = _arr(x)
    k2 = ndmin - x.ndim
    if k2 <= 0:
        return x
    r = x.reshape((1,) * k2 + x.shape)
    if trans1d != -1:
        k1 = x.ndim
        if trans1d < 0:
            trans1d += k2 + 1
        defaxes = list(range(ndmin))
        axes = defaxes[:trans1d] + defaxes[trans1d + k1:] + defaxes[trans1d:trans1d + k1]
        r = r.transpose(tuple(_np.argsort(axes)))
    return r


def _numpy_concat(obj, key):
    name = "r_" if obj.trans1d == -1 and obj.ndmin == 1 else "c_"
    _fallback.record("numpy." + name)
    return _fallback.from_numpy(getattr(_np, name)[_fallback.to_numpy(key)])


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


# ---------------------------------------------------------------- sorting
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, stable):
    if kind not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got '{kind}')")
    if stable is not None and kind is not None:
        raise ValueError("`kind` and `stable` parameters can't be provided at the same time. Use only one of them.")


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.sort: a sorted copy along `axis` (flattened when None); NaN last (also when
    `descending`), complex lexicographic. Structured `order=` runs on NumPy."""
    _check_kind(kind, stable)
    x = _arr(a)
    if order is not None:
        return _numpy("sort", a, axis=axis, kind=kind, order=order)
    return _op("sort", x, _axis(axis), bool(descending))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.argsort: int64 indices that sort `a` along `axis`. npc's sort is always stable,
    so ties keep their input order (NumPy's kind='stable' result exactly); `descending`
    puts the largest first, ties still in input order, NaNs last."""
    _check_kind(kind, stable)
    x = _arr(a)
    if order is not None:
        return _numpy("argsort", a, axis=axis, kind=kind, order=order)
    return _op("argsort", x, _axis(axis), bool(descending))


def lexsort(keys, axis=-1):
    """numpy.lexsort: indices sorting by the last key, then the previous ones (stable)."""
    if isinstance(keys, ndarray) or isinstance(keys, _np.ndarray):
        ks = [_arr(k) for k in _arr(keys)] if _arr(keys).ndim > 0 else [_arr(keys)]
    else:
        ks = [_arr(k) for k in keys]
    return _op("lexsort", ks, _operator.index(axis))


def _kth(kth):
    k = _arr(kth)
    if k.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    return [int(v) for v in _np.asarray(k).ravel()]


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition: a copy with each kth element in sorted position, smaller or equal
    elements before it and greater or equal after (the order within each side differs from
    NumPy's, which NumPy leaves unspecified)."""
    x = _arr(a)
    if order is not None:
        return _numpy("partition", a, kth, axis=axis, kind=kind, order=order)
    if kind != "introselect":
        raise ValueError(f"Unknown selection kind: {kind!r}")
    if x.size == 0:  # NumPy returns empty input unchanged, whatever kth
        return ravel(x).copy() if axis is None else x.copy()
    return _op("partition", x, _kth(kth), _axis(axis))


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.argpartition: int64 indices that partition `a` (see partition)."""
    x = _arr(a)
    if order is not None:
        return _numpy("argpartition", a, kth, axis=axis, kind=kind, order=order)
    return _op("argpartition", x, _kth(kth), _axis(axis))


def searchsorted(a, v, side="left", sorter=None):
    """numpy.searchsorted: int64 insertion points of `v` into the sorted 1-d `a` ('left':
    first suitable position, 'right': last). A scalar `v` gives a NumPy integer."""
    if side not in ("left", "right") and not (isinstance(side, str) and side[:1].lower() in ("l", "r")):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    right = side[:1].lower() == "r"
    x = _arr(a)
    scalar = not isinstance(v, (ndarray, _np.ndarray, list, tuple))
    try:
        vv = _arr(v) if not scalar or not type(v) in (int, float, complex, bool) else \
            _from_numpy(_np.asarray(v, dtype=_result_type(x, v)))
    except OverflowError:
        # A Python int outside a's integer range still has a place: before or after all.
        vv = _arr(v)
    r = _op("searchsorted", x, vv, right, None if sorter is None else _int_array(sorter))
    if r.ndim == 0:
        return r[()]
    return r


# ---------------------------------------------------------------- sets
UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _unique_rows(x, axis, return_index, return_inverse, return_counts, equal_nan):
    axis = _operator.index(axis)
    moved = moveaxis(x, axis, 0)
    orig = moved.shape
    rows = moved.reshape((orig[0], -1)) if orig[0] else moved.reshape((0, int(_np.prod(orig[1:]))))
    if rows.shape[1] == 0:
        keys = [_core.zeros((rows.shape[0],), 7, "C")]
    else:
        keys = [rows[:, j] for j in range(rows.shape[1] - 1, -1, -1)]
    perm = _np.asarray(lexsort(keys)) if rows.shape[0] else _np.zeros(0, _np.int64)
    rl = _np.asarray(rows).tolist()
    first, inv, counts = [], _np.empty(len(rl), _np.int64), []
    prev = None
    for p in perm.tolist():
        r = rl[p]
        # Rows compare field by field as NumPy's structured view does: NaN never equals NaN
        # (equal_nan does not apply along an axis), -0.0 equals 0.0.
        same = prev is not None and all(a == b for a, b in zip(r, prev))
        if not same:
            first.append(p)
            counts.append(0)
        counts[-1] += 1
        inv[p] = len(first) - 1
        prev = r
    idx = _from_numpy(_np.asarray(first, dtype=_np.int64))
    vals = moveaxis(take(moved, idx, axis=0), 0, axis)
    out = [vals]
    if return_index:
        out.append(idx)
    if return_inverse:
        out.append(_from_numpy(inv))
    if return_counts:
        out.append(_from_numpy(_np.asarray(counts, dtype=_np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """numpy.unique: sorted unique values, optionally with first indices, inverse (input's
    shape when axis is None) and counts; with `axis`, unique sub-arrays along it."""
    x = _arr(ar)
    if axis is not None:
        return _unique_rows(x, axis, return_index, return_inverse, return_counts, equal_nan)
    vals, idx, inv, cnt = _op("unique", x, bool(equal_nan))
    out = [vals]
    if return_index:
        out.append(idx)
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x):
    """numpy.unique_values: the unique values, NaNs distinct (sorted; NumPy may return them
    in hash order)."""
    return _op("unique", _arr(x), False)[0]


def unique_counts(x):
    """numpy.unique_counts: (values, counts)."""
    v, _, _, c = _op("unique", _arr(x), False)
    return UniqueCountsResult(v, c)


def unique_inverse(x):
    """numpy.unique_inverse: (values, inverse_indices) with inverse in x's shape."""
    v, _, i, _ = _op("unique", _arr(x), False)
    return UniqueInverseResult(v, i)


def unique_all(x):
    """numpy.unique_all: (values, indices, inverse_indices, counts)."""
    v, idx, i, c = _op("unique", _arr(x), False)
    return UniqueAllResult(v, idx, i, c)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """numpy.isin: bool array of element's shape, True where the element is in test_elements."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    if kind == "table":
        e, t = _arr(element), _arr(test_elements)
        if e.dtype.kind not in "iub" or t.dtype.kind not in "iub":
            raise ValueError("The 'table' method is only supported for boolean or integer arrays. "
                             "Please select 'sort' or None for kind.")
    return _op("isin", _arr(element), ravel(_arr(test_elements)), bool(invert))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """numpy.intersect1d: sorted values present in both (and their first indices)."""
    a1, a2 = ravel(_arr(ar1)), ravel(_arr(ar2))
    if return_indices:
        u1, i1 = unique(a1, return_index=True) if not assume_unique else (a1, _core.arange(0, a1.size, 1, 7))
        u2, i2 = unique(a2, return_index=True) if not assume_unique else (a2, _core.arange(0, a2.size, 1, 7))
    else:
        u1 = unique(a1) if not assume_unique else a1
        u2 = unique(a2) if not assume_unique else a2
    dt = _result_type(u1, u2)
    u1, u2 = u1.astype(dt), u2.astype(dt)
    m = _op("isin", u1, u2, False)
    common = u1[m]
    if assume_unique:
        order = argsort(common)
        common = common[order]
    if not return_indices:
        return common
    idx1 = i1[m] if not assume_unique else i1[m][order]
    pos2 = _op("searchsorted", sort(u2), common, False, None) if not assume_unique else None
    if not assume_unique:
        idx2 = i2[pos2]
    else:
        perm2 = argsort(u2)
        idx2 = perm2[_op("searchsorted", u2[perm2], common, False, None)]
    return common, idx1, idx2


def union1d(ar1, ar2):
    """numpy.union1d: sorted unique values of both inputs."""
    return unique(concatenate((ravel(_arr(ar1)), ravel(_arr(ar2)))))


def setdiff1d(ar1, ar2, assume_unique=False):
    """numpy.setdiff1d: sorted unique values of ar1 not in ar2 (ar1's order if assume_unique)."""
    a1 = ravel(_arr(ar1)) if assume_unique else unique(ar1)
    return a1[_op("isin", a1, ravel(_arr(ar2)), True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """numpy.setxor1d: sorted values in exactly one of the inputs."""
    a1 = ravel(_arr(ar1)) if assume_unique else unique(ar1)
    a2 = ravel(_arr(ar2)) if assume_unique else unique(ar2)
    aux = concatenate((a1, a2))
    if aux.size == 0:
        return aux
    vals, _, _, counts = _op("unique", aux, True)
    keep = _from_numpy(_np.asarray(counts) == 1)  # counts is a small int64 array
    return vals[keep]


# ---------------------------------------------------------------- counting
def bincount(x, /, weights=None, minlength=0):
    """numpy.bincount: occurrences of each non-negative integer (sums of weights, float64)."""
    if isinstance(x, (list, tuple)) and _np.size(x) == 0:
        x = _np.zeros(0, _np.int64)  # an empty sequence is an empty intp array for NumPy
    xs = _arr(x)
    w = None if weights is None else _arr(weights)
    if minlength is None:
        raise TypeError("use 0 instead of None for minlength")
    m = _operator.index(minlength)
    if xs.size == 0 and xs.dtype.kind in "iub" and m >= 0:
        return _from_numpy(_np.zeros(m, _np.int64))  # NumPy ignores the weights of empty input
    if w is not None and xs.size and not _np.can_cast(w.dtype, _np.float64, "safe"):
        raise TypeError(f"Cannot cast array data from {w.dtype!r} to dtype('float64') according to the rule 'safe'")
    return _op("bincount", xs, w, _operator.index(minlength))


def _edges(a, bins, range_, weights):
    from ._creation import linspace
    if isinstance(bins, str):
        return None
    if _np.ndim(bins) == 0:
        n = _operator.index(bins)
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range_ is not None:
            first, last = range_
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (_np.isfinite(first) and _np.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        elif a.size == 0:
            first, last = 0, 1
        else:
            first, last = _op("value_range", a)
            if not (_np.isfinite(first) and _np.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
            # NumPy takes a.min()/a.max() as scalars of a's dtype (strong under NEP 50).
            first, last = a.dtype.type(first), a.dtype.type(last)
        if first == last:
            first, last = first - 0.5, last + 0.5
        dt = _np.result_type(first, last, a.dtype)
        if dt.kind in "iub":
            dt = _np.result_type(dt, float)
        # The n + 1 edges follow numpy.linspace's arithmetic in the edge dtype (float32 data
        # gives float32 arithmetic); NumPy computes these few values, npc counts the data.
        edges = _np.linspace(first, last, n + 1, endpoint=True, dtype=dt)
        if _np.any(edges[:-1] >= edges[1:]):
            raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
        return _from_numpy(edges)
    e = _arr(bins)
    if e.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if e.size > 1 and _op("monotonic", e) != 1:
        raise ValueError("`bins` must increase monotonically, when an array")
    return e


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """numpy.histogram_bin_edges for integer or array `bins`."""
    x = ravel(_arr(a))
    e = _edges(x, bins, range, weights)
    if e is None:
        return _numpy("histogram_bin_edges", a, bins, range, weights)
    return e


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram: (counts, bin_edges). Bins are half-open except the last; counts are
    int64, or the sums of `weights` (float64) ; density divides by widths and total."""
    x = ravel(_arr(a))
    e = _edges(x, bins, range, weights)
    if e is None or (weights is not None and _arr(weights).dtype.kind == "c"):
        return _numpy("histogram", a, bins, range, density, weights)
    w = None if weights is None else _arr(weights)
    if w is not None and w.shape != _arr(a).shape:
        raise ValueError("weights should have the same shape as a.")
    counts = _op("histogram", [x], [e], w, bool(density))
    if w is not None and not density and w.dtype != _np.float64:
        counts = counts.astype(w.dtype)
    return counts, e


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """numpy.histogramdd for (N, D) samples (or a sequence of D coordinate arrays)."""
    if isinstance(sample, (list, tuple)):
        coords = [ravel(_arr(s)) for s in sample]
    else:
        s = _arr(sample)
        if s.ndim == 1:
            s = s.reshape((-1, 1))
        coords = [s[:, d] for d in builtins_range(s.shape[1])]
    D = len(coords)
    try:
        nb = len(bins)
        if nb != D:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
        bins_list = list(bins)
    except TypeError:
        bins_list = [bins] * D
    ranges = [None] * D if range is None else list(range)
    edges = []
    for d in builtins_range(D):
        edges.append(_edges(coords[d], bins_list[d], ranges[d], None))
    w = None if weights is None else _arr(weights)
    counts = _op("histogram", coords, edges, w, bool(density))
    if not density and w is None:
        counts = counts.astype(_np.float64)
    return counts, edges


builtins_range = __builtins__["range"] if isinstance(__builtins__, dict) else __builtins__.range


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """numpy.histogram2d: (H, xedges, yedges) with H float64 as NumPy returns it."""
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        xedges = yedges = _arr(bins)
        bins = [xedges, yedges]
    H, edges = histogramdd([x, y], bins, range, density, weights)
    return H, edges[0], edges[1]


def digitize(x, bins, right=False):
    """numpy.digitize: indices of the bins each value falls in (bins increasing or
    decreasing; ValueError otherwise)."""
    xs = _arr(x)
    b = _arr(bins)
    if xs.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if b.ndim != 1:
        raise ValueError("object too deep for desired array" if b.ndim > 1 else "object of too small depth for desired array")
    mono = _op("monotonic", b) if b.size > 1 else 1
    if mono == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side_right = not right
    if mono == -1:
        rb = b[::-1]
        pos = _op("searchsorted", rb, xs, side_right, None)
        return _from_numpy(b.size - _np.asarray(pos))
    r = _op("searchsorted", b, xs, side_right, None)
    return r


# ---------------------------------------------------------------- ndarray methods
def _m_sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """numpy.ndarray.sort: sorts in place."""
    if order is not None:
        return _fallback.wrap_function("ndarray.sort", _np.ndarray.sort)(self, axis, kind, order)
    _check_kind(kind, stable)
    if not self._flags[3]:
        raise ValueError("assignment destination is read-only")
    _op("assign", self, _op("sort", self, _operator.index(axis))) if self.ndim == 1 else \
        self.__setitem__(Ellipsis, _op("sort", self, _operator.index(axis)))


def _m_partition(self, kth, axis=-1, kind="introselect", order=None):
    """numpy.ndarray.partition: partitions in place."""
    if not self._flags[3]:
        raise ValueError("assignment destination is read-only")
    self[...] = partition(self, kth, axis, kind, order)


def _m_argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    return argsort(self, axis, kind, order, stable=stable)


def _m_argpartition(self, kth, axis=-1, kind="introselect", order=None):
    return argpartition(self, kth, axis, kind, order)


def _m_searchsorted(self, v, side="left", sorter=None):
    return searchsorted(self, v, side, sorter)


def _m_nonzero(self):
    return nonzero(self)


def _m_take(self, indices, axis=None, out=None, mode="raise"):
    return take(self, indices, axis, out, mode)


def _m_put(self, indices, values, mode="raise"):
    return put(self, indices, values, mode)


def _m_compress(self, condition, axis=None, out=None):
    return compress(condition, self, axis, out)


def _m_diagonal(self, offset=0, axis1=0, axis2=1):
    return diagonal(self, offset, axis1, axis2)


def _m_choose(self, choices, out=None, mode="raise"):
    return choose(self, choices, out, mode)


def _m_trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return trace(self, offset, axis1, axis2, dtype, out)


for _name, _fn in {"sort": _m_sort, "partition": _m_partition, "argsort": _m_argsort,
                   "argpartition": _m_argpartition, "searchsorted": _m_searchsorted, "nonzero": _m_nonzero,
                   "take": _m_take, "put": _m_put, "compress": _m_compress, "diagonal": _m_diagonal,
                   "choose": _m_choose, "trace": _m_trace}.items():
    setattr(ndarray, _name, _fn)


# ---------------------------------------------------------------- differences, interpolation, correlation
# These need arithmetic: they are compositions of npc's ufuncs over views, following
# NumPy's formulas and evaluation order so results match bit for bit where NumPy's do.
__all__ += ["diff", "ediff1d", "interp", "convolve", "correlate", "gradient"]

_NoValue = _np._NoValue


def _ufuncs():
    import npc
    return npc


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """numpy.diff: n-th discrete difference along `axis` (not_equal for booleans).

    ValueError for 0-d input or negative n; AxisError for bad axes.
    """
    u = _ufuncs()
    if n == 0:
        return _arr(a)
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    x = _arr(a)
    nd = x.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _operator.index(axis)
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    combined = []
    for extra, where in ((prepend, "pre"), (append, "post")):
        if extra is _NoValue:
            combined.append(None)
            continue
        e = _arr(extra)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape))
        combined.append(e)
    parts = [p for p in (combined[0], x, combined[1]) if p is not None]
    if len(parts) > 1:
        x = concatenate(parts, axis)
    sl1 = (slice(None),) * axis + (slice(1, None),)
    sl2 = (slice(None),) * axis + (slice(None, -1),)
    op = u.not_equal if x.dtype == _np.bool_ else u.subtract
    for _ in builtins_range(n):
        x = op(x[sl1], x[sl2])
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """numpy.ediff1d: differences of the flattened array, with optional ends."""
    u = _ufuncs()
    x = ravel(_arr(ary))
    dtype_req = x.dtype
    parts = []
    for extra, name in ((to_begin, "to_begin"), (None, None), (to_end, "to_end")):
        if name is None:
            parts.append(u.subtract(x[1:], x[:-1]))
            continue
        if extra is None:
            continue
        e = _arr(extra)
        if not _np.can_cast(e.dtype, dtype_req, casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        parts.append(ravel(e).astype(dtype_req))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: 1-d piecewise-linear interpolation (float64, or complex128 for complex fp),
    NumPy's formula slope * (x - xp[j]) + fp[j] with its NaN and exact-hit rules."""
    u = _ufuncs()
    fpa = _arr(fp)
    dt = _np.complex128 if fpa.dtype.kind == "c" else _np.float64
    xa = _arr(x).astype(_np.float64)
    xpa = _arr(xp).astype(_np.float64)
    fpa = fpa.astype(dt)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        if xpa.ndim != 1 or fpa.ndim != 1:
            raise ValueError("Data points must be 1-D sequences")
        if xpa.shape[0] != fpa.shape[0]:
            raise ValueError("fp and xp are not of the same length")
        xa = u.remainder(xa, period)
        xpa = u.remainder(xpa, period)
        order = argsort(xpa)
        xpa, fpa = xpa[order], fpa[order]
        xpa = concatenate((u.subtract(xpa[-1:], period), xpa, u.add(xpa[0:1], period)))
        fpa = concatenate((fpa[-1:], fpa, fpa[0:1]))
    if xpa.ndim != 1 or fpa.ndim != 1:
        raise ValueError("object too deep for desired array")
    if fpa.shape[0] != xpa.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xpa.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    n = xpa.shape[0]
    lval = fpa[0] if left is None else _np.asarray(left, dtype=dt)[()]
    rval = fpa[-1] if right is None else _np.asarray(right, dtype=dt)[()]
    j = u.subtract(_op("searchsorted", xpa, xa, True, None), 1)  # last j with xp[j] <= x
    jc = u.clip(j, 0, max(n - 2, 0))
    x0, x1 = xpa[jc], xpa[u.minimum(jc + 1, n - 1)]
    f0, f1 = fpa[jc], fpa[u.minimum(jc + 1, n - 1)]
    with _np.errstate(all="ignore"):
        slope = u.divide(u.subtract(f1, f0), u.subtract(x1, x0))
        res = u.add(u.multiply(slope, u.subtract(xa, x0)), f0)
        nan = u.isnan(res)
        res = u.where(nan, u.add(u.multiply(slope, u.subtract(xa, x1)), f1), res)
        res = u.where(u.isnan(res) & u.equal(f0, f1), f0, res)
    jfull = j
    res = u.where(u.equal(xa, xpa[u.clip(jfull, 0, n - 1)]) & (jfull >= 0), fpa[u.clip(jfull, 0, n - 1)], res)
    res = u.where(jfull == n - 1, fpa[n - 1], res)
    res = u.where(jfull < 0, lval, res)
    res = u.where(u.greater(xa, xpa[n - 1]), rval, res)
    res = u.where(u.isnan(xa), xa.astype(dt), res)
    res = res.astype(dt)
    return res[()] if res.ndim == 0 else res


def _correlate(a, v, mode, conj):
    u = _ufuncs()
    x = _arr(a)
    y = _arr(v)
    if x.ndim != 1 or y.ndim != 1:
        x, y = ravel(x) if x.ndim == 0 else x, ravel(y) if y.ndim == 0 else y
        if x.ndim != 1 or y.ndim != 1:
            raise ValueError("object too deep for desired array")
    modes = {"valid": 0, "same": 1, "full": 2, 0: 0, 1: 1, 2: 2, "v": 0, "s": 1, "f": 2}
    if mode not in modes:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    m = modes[mode]
    dt = _result_type(x, y)
    x, y = x.astype(dt), y.astype(dt)
    if conj and dt.kind == "c":
        y = u.conjugate(y)
    n1, n2 = x.shape[0], y.shape[0]
    if n1 == 0:
        raise ValueError("first array argument cannot be empty")
    if n2 == 0:
        raise ValueError("second array argument cannot be empty")
    inverted = n1 < n2
    if inverted:
        x, y, n1, n2 = y, x, n2, n1
    if m == 0:
        length, n_left = n1 - n2 + 1, 0
    elif m == 1:
        length, n_left = n1, n2 // 2
    else:
        length, n_left = n1 + n2 - 1, n2 - 1
    # out[i] = sum_j x[i - n_left + j] * y[j] over the j in range, in ascending j (NumPy's
    # dot order); float16 accumulates in float32 as NumPy's half dot does.
    acc_dt = _np.float32 if dt == _np.float16 else dt
    out = _core.zeros((length,), code_of(acc_dt), "C")
    xs = x.astype(acc_dt)
    ys = y.astype(acc_dt)
    for j in builtins_range(n2):
        lo = max(0, n_left - j)
        hi = min(length, n1 + n_left - j)
        if hi <= lo:
            continue
        seg = xs[lo - n_left + j:hi - n_left + j]
        if dt == _np.bool_:
            out[lo:hi] = u.logical_or(out[lo:hi], u.logical_and(seg, ys[j]))
        else:
            out[lo:hi] = u.add(out[lo:hi], u.multiply(seg, ys[j]))
    out = out.astype(dt)
    return out[::-1].copy() if inverted else out


def correlate(a, v, mode="valid"):
    """numpy.correlate: c[k] = sum_n a[n + k] * conj(v[n]) ('valid', 'same' or 'full')."""
    return _correlate(a, v, mode, True)


def convolve(a, v, mode="full"):
    """numpy.convolve: discrete linear convolution ('full', 'same' or 'valid')."""
    x, y = _arr(a), _arr(v)
    if x.ndim == 0:
        x = ravel(x)
    if y.ndim == 0:
        y = ravel(y)
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if y.shape[0] > x.shape[0]:
        x, y = y, x
    return _correlate(x, y[::-1], mode, False)


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: second-order central differences inside, first or second order
    one-sided differences at the edges; scalar or coordinate-array spacings per axis."""
    u = _ufuncs()
    f = _arr(f)
    N = f.ndim
    if axis is None:
        axes = tuple(builtins_range(N))
    else:
        axes = tuple(_operator.index(a) % N if -N <= _operator.index(a) < N else
                     (_ for _ in ()).throw(_np.exceptions.AxisError(
                         f"axis {a} is out of bounds for array of dimension {N}")) for a in _axes(axis))
    len_axes = len(axes)
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len_axes
    elif n == 1 and _np.ndim(varargs[0]) == 0:
        dx = list(varargs) * len_axes
    elif n == len_axes:
        dx = list(varargs)
        for i, distances in enumerate(dx):
            d = _arr(distances) if not type(distances) in (int, float) else distances
            if isinstance(d, ndarray) and d.ndim == 0:
                continue
            if isinstance(d, ndarray):
                if d.ndim != 1:
                    raise ValueError("distances must be either scalars or 1d")
                if len(d) != f.shape[axes[i]]:
                    raise ValueError("when 1d, distances must match the length of the corresponding dimension")
                if d.dtype.kind in "iu":
                    d = d.astype(_np.float64)
                diffx = u.subtract(d[1:], d[:-1])
                if bool(u.all(u.equal(diffx, diffx[0]))):
                    diffx = diffx[0]
                dx[i] = diffx
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    outvals = []
    otype = f.dtype
    if otype.kind in "iu" or otype == _np.bool_:
        otype = _np.dtype(_np.float64)
    if f.dtype.kind in "iub":
        f = f.astype(_np.float64)
    for ax, ax_dx in zip(axes, dx):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                             "(edge_order + 1) elements are required.")
        out = _core.empty(f.shape, code_of(otype), "C")

        def s(sl):
            return (slice(None),) * ax + (sl,)
        uniform = not isinstance(ax_dx, ndarray) or ax_dx.ndim == 0
        if uniform:
            out[s(slice(1, -1))] = u.divide(u.subtract(f[s(slice(2, None))], f[s(slice(None, -2))]),
                                            u.multiply(2.0, ax_dx))
        else:
            dx1 = ax_dx[0:-1]
            dx2 = ax_dx[1:]
            a = u.divide(u.negative(dx2), u.multiply(dx1, u.add(dx1, dx2)))
            b = u.divide(u.subtract(dx2, dx1), u.multiply(dx1, dx2))
            c = u.divide(dx1, u.multiply(dx2, u.add(dx1, dx2)))
            shape = [1] * N
            shape[ax] = -1
            a, b, c = a.reshape(shape), b.reshape(shape), c.reshape(shape)
            out[s(slice(1, -1))] = u.add(u.add(u.multiply(a, f[s(slice(None, -2))]),
                                               u.multiply(b, f[s(slice(1, -1))])),
                                         u.multiply(c, f[s(slice(2, None))]))
        if edge_order == 1:
            d0 = ax_dx if uniform else ax_dx[0]
            out[s(slice(0, 1))] = u.divide(u.subtract(f[s(slice(1, 2))], f[s(slice(0, 1))]), d0)
            dn = ax_dx if uniform else ax_dx[-1]
            out[s(slice(-1, None))] = u.divide(u.subtract(f[s(slice(-1, None))], f[s(slice(-2, -1))]), dn)
        else:
            if uniform:
                a, b, c = -1.5 / ax_dx, 2.0 / ax_dx, -0.5 / ax_dx
            else:
                dx1, dx2 = float(ax_dx[0]), float(ax_dx[1])
                a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = - dx1 / (dx2 * (dx1 + dx2))
            out[s(slice(0, 1))] = u.add(u.add(u.multiply(a, f[s(slice(0, 1))]), u.multiply(b, f[s(slice(1, 2))])),
                                        u.multiply(c, f[s(slice(2, 3))]))
            if uniform:
                a, b, c = 0.5 / ax_dx, -2.0 / ax_dx, 1.5 / ax_dx
            else:
                dx1, dx2 = float(ax_dx[-2]), float(ax_dx[-1])
                a = (dx2) / (dx1 * (dx1 + dx2))
                b = - (dx2 + dx1) / (dx1 * dx2)
                c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
            out[s(slice(-1, None))] = u.add(u.add(u.multiply(a, f[s(slice(-3, -2))]),
                                                  u.multiply(b, f[s(slice(-2, -1))])),
                                            u.multiply(c, f[s(slice(-1, None))]))
        outvals.append(out)
    return outvals[0] if len_axes == 1 else tuple(outvals)

_wrap_all(globals())
