"""Shape manipulation and joining with NumPy's names, signatures and rules.

Views where NumPy returns views (reshape when possible, ravel, transpose, swapaxes, moveaxis,
expand_dims, squeeze, broadcast_to, flip, diagonal), copies where NumPy copies. The kernels
are in C++ (src/core/shape.cpp, reached through ``_core._shape_op``, see Note [shape
dispatch] in csrc/bind_indexing.cpp); this module parses arguments like NumPy.
"""
import functools
import operator
import types

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _np_normalize_axis_tuple

from . import _core, _fallback
from ._array import _as_npc, _from_numpy, _scalar_result, _scalar_type_name, ndarray
from ._dtypes import code_of

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes", "moveaxis",
           "rollaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "atleast_1d", "atleast_2d", "atleast_3d", "concatenate", "concat", "stack", "vstack", "hstack",
           "dstack", "column_stack", "block", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack",
           "tile", "repeat", "flip", "fliplr", "flipud", "roll", "rot90", "pad", "resize", "append", "insert",
           "delete", "trim_zeros", "copyto", "shares_memory", "may_share_memory", "shape", "ndim", "size"]

_op = _core._shape_op
_concatenate_fast = _core._concatenate_fast


def _arr(a):
    """npc array for an array-like (zero-copy for NumPy arrays); raises NotNative when its
    dtype is not native, and the public function then runs on NumPy (see _native)."""
    r = _as_npc(a)
    if not isinstance(r, ndarray):
        raise _fallback.NotNative
    return r


def _native(fn):
    """Runs the native `fn`, or numpy.<name> (a counted fallback, an error under
    strict_fallback) when an argument is not native to npc (datetime64, strings, objects)."""
    np_fn = getattr(_np, fn.__name__)
    name = "npc." + fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _fallback.NotNative:
            return _fallback.call(name, np_fn, args, kwargs)
    return wrapper


def _wrap_all(namespace):
    """Applies _native to every public function of a module that NumPy also has."""
    for n in namespace["__all__"]:
        obj = namespace.get(n)
        if isinstance(obj, types.FunctionType) and hasattr(_np, n):
            namespace[n] = _native(obj)


def _numpy(name, *args, **kwargs):
    """Runs numpy.<name> explicitly (non-native dtypes or options npc does not have)."""
    return _fallback.wrap_function(name, getattr(_np, name))(*args, **kwargs)


def _axes(axis):
    """A list of ints from an int or a sequence (TypeError otherwise, as NumPy)."""
    try:
        return [operator.index(axis)]
    except TypeError:
        return [operator.index(a) for a in axis]


def _axis_or_none(axis):
    return None if axis is None else operator.index(axis)


# ---------------------------------------------------------------- views
def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """numpy.reshape: a view whenever the strides allow, else a copy (one -1 allowed).

    Raises ValueError when the sizes differ ("cannot reshape array of size 6 into shape (4,)").
    """
    if newshape is not None:
        shape = newshape
    x = _arr(a)
    return x.reshape(shape, order=order, copy=copy)


def ravel(a, order="C"):
    """numpy.ravel: 1-d view when the layout allows (order C/F/A/K), else a copy."""
    x = _arr(a)
    return _op("ravel", x, "C" if order is None else order)


def transpose(a, axes=None):
    """numpy.transpose: axes reversed, or permuted by `axes` (view)."""
    x = _arr(a)
    return x.transpose() if axes is None else x.transpose(axes)


def permute_dims(a, /, axes=None):
    """numpy.permute_dims (array API name of transpose)."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """numpy.matrix_transpose: swaps the last two axes (ValueError for ndim < 2)."""
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return _op("swapaxes", x, -1, -2)


def swapaxes(a, axis1, axis2):
    """numpy.swapaxes (view)."""
    return _op("swapaxes", _arr(a), operator.index(axis1), operator.index(axis2))


def moveaxis(a, source, destination):
    """numpy.moveaxis: axes moved to new positions, the others keep their order (view)."""
    return _op("moveaxis", _arr(a), _axes(source), _axes(destination))


def rollaxis(a, axis, start=0):
    """numpy.rollaxis: axis rolled backwards until it lies before `start` (view)."""
    x = _arr(a)
    n = x.ndim
    axis = operator.index(axis)
    if not -n <= axis < n:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {n}")
    axis = axis + n if axis < 0 else axis
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start - n if start < 0 else start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return x.transpose(axes)


def expand_dims(a, axis):
    """numpy.expand_dims: length-1 axes inserted at `axis` (view)."""
    x = _arr(a)
    return _op("expand_dims", x, _axes(axis))


def squeeze(a, axis=None):
    """numpy.squeeze: length-1 axes removed (view). ValueError for axes not of length 1."""
    x = _arr(a)
    return _op("squeeze", x, None if axis is None else _axes(axis))


def broadcast_to(array, shape, subok=False):
    """numpy.broadcast_to: a read-only view with the given shape (ValueError if impossible)."""
    x = _arr(array)
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (operator.index(shape),)
    return _op("broadcast_to", x, tuple(shape))


def broadcast_shapes(*args):
    """numpy.broadcast_shapes: the broadcast shape of shapes (ints or tuples)."""
    shapes = [(operator.index(s),) if not isinstance(s, (tuple, list)) else tuple(s) for s in args]
    return _op("broadcast_shapes", shapes)


def broadcast_arrays(*args, subok=False):
    """numpy.broadcast_arrays: the inputs broadcast to one shape (a tuple).

    Inputs that already have the shape are returned as they are; the others become views
    that, as in NumPy 2.5, are writeable when the input is but carry NumPy's WARN_ON_WRITE
    flag: the first write through one (or a view of it) gives a DeprecationWarning, and
    reading its ``flags.writeable`` a FutureWarning, until the flag is set explicitly.
    ValueError when the shapes do not broadcast.
    """
    xs = [_arr(a) for a in args]
    shape = _op("broadcast_shapes", [x.shape for x in xs])
    out = []
    for x in xs:
        if x.shape == shape:
            out.append(x)
            continue
        v = _op("broadcast_to", x, shape)
        if x._flags[3]:
            _core._set_warn_on_write(v)
        out.append(v)
    return tuple(out)


def _atleast(arys, n):
    out = []
    for a in arys:
        x = _arr(a)
        if x.ndim < n:
            if n == 3 and x.ndim == 2:
                x = x.reshape(x.shape + (1,))
            elif n == 3 and x.ndim == 1:
                x = x.reshape((1,) + x.shape + (1,))
            else:
                x = x.reshape((1,) * (n - x.ndim) + x.shape)
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """numpy.atleast_1d: inputs viewed with at least one dimension."""
    return _atleast(arys, 1)


def atleast_2d(*arys):
    """numpy.atleast_2d: inputs viewed with at least two dimensions (new axes in front)."""
    return _atleast(arys, 2)


def atleast_3d(*arys):
    """numpy.atleast_3d: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    return _atleast(arys, 3)


def flip(m, axis=None):
    """numpy.flip: a view with reversed order along `axis` (all axes when None)."""
    x = _arr(m)
    if axis is None and x.ndim == 0:
        return x[()]  # NumPy indexes with an empty tuple: a scalar
    return _op("flip", x, None if axis is None else _axes(axis))


def fliplr(m):
    """numpy.fliplr: reverses axis 1 (ValueError for ndim < 2)."""
    x = _arr(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return _op("flip", x, [1])


def flipud(m):
    """numpy.flipud: reverses axis 0 (ValueError for 0-d)."""
    x = _arr(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return _op("flip", x, [0])


# ---------------------------------------------------------------- joining
def _dtype_code(dtype):
    if dtype is None:
        return -1
    code = code_of(dtype)
    if code is None:
        raise TypeError(f"npc: dtype {dtype!r} is not native")
    return code


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concatenate: joins arrays along an existing axis (flattened when axis=None).

    The result dtype is numpy.result_type of the inputs unless `dtype` is given; casts follow
    `casting`. Raises ValueError for no input, 0-d inputs or mismatched shapes, AxisError
    for bad axes, TypeError for forbidden casts.
    """
    if out is None and dtype is None and casting == "same_kind":
        r = _concatenate_fast(arrays, axis)  # npc arrays in a list or tuple, an int axis
        if r is not None:
            return r
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    xs = [_arr(a) for a in arrays]
    return _op("concatenate", xs, _axis_or_none(axis), _dtype_code(dtype), casting,
               None if out is None else _arr(out))


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concat (array API name of concatenate)."""
    return concatenate(arrays, axis, out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.stack: joins equal-shaped arrays along a new axis."""
    if not hasattr(arrays, "__getitem__"):
        raise TypeError('arrays to stack must be passed as a "sequence" type such as list or tuple.')
    xs = [_arr(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    return _op("stack", xs, operator.index(axis), _dtype_code(dtype), casting, None if out is None else _arr(out))


def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.vstack: concatenation along axis 0 after atleast_2d."""
    xs = [atleast_2d(a) for a in tup]
    return concatenate(xs, 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.hstack: along axis 1 (axis 0 for 1-d inputs) after atleast_1d."""
    xs = [atleast_1d(a) for a in tup]
    if xs and xs[0].ndim == 1:
        return concatenate(xs, 0, dtype=dtype, casting=casting)
    return concatenate(xs, 1, dtype=dtype, casting=casting)


def dstack(tup):
    """numpy.dstack: along axis 2 after atleast_3d."""
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    """numpy.column_stack: 1-d inputs become columns; 2-d inputs are stacked along axis 1."""
    xs = []
    for a in tup:
        x = _arr(a)
        if x.ndim < 2:
            x = x.reshape((-1, 1)) if x.ndim == 1 else x.reshape((1, 1))
        xs.append(x)
    return concatenate(xs, 1)


def block(arrays):
    """numpy.block: assembles nested lists of arrays (innermost lists join along the last axis)."""
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("List at arrays[] cannot be empty")
            ds = {depth(v) for v in x}
            if len(ds) != 1:
                raise ValueError("List depths are mismatched.")
            return ds.pop() + 1
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and np.block does "
                            "not allow implicit conversion from tuple to ndarray.")
        return 0
    list_ndim = depth(arrays)

    def leaves(x):
        return [y for v in x for y in leaves(v)] if isinstance(x, list) else [_arr(x)]
    result_ndim = max([list_ndim] + [x.ndim for x in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, list):
            v = _arr(x)
            return v.reshape((1,) * (result_ndim - v.ndim) + v.shape) if v.ndim < result_ndim else v
        parts = [build(v, level + 1) for v in x]
        return concatenate(parts, axis=-(list_ndim - level))
    return build(arrays, 0)


def _split_points(n, indices_or_sections, equal):
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        try:
            len(indices_or_sections)
        except TypeError:
            # NumPy: a non-sequence (a float, a 0-d array) is a section count: split checks
            # divisibility with the value itself, then both take int() of it.
            if equal and n % indices_or_sections:
                raise ValueError("array split does not result in an equal division") from None
            sections = int(indices_or_sections)
        else:
            pts = [operator.index(i) for i in indices_or_sections]
            return [0] + pts + [n]
    # numpy.split checks divisibility before array_split checks the count: zero sections
    # are a ZeroDivisionError there ("integer modulo by zero"), negative ones a ValueError.
    if equal and n % sections:
        raise ValueError("array split does not result in an equal division")
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    each, extra = divmod(n, sections)
    sizes = [0] + extra * [each + 1] + (sections - extra) * [each]
    pts = []
    acc = 0
    for s in sizes:
        acc += s
        pts.append(acc)
    return pts


def _split(ary, indices_or_sections, axis, equal):
    x = _arr(ary)
    axis = operator.index(axis)
    n = x.shape[axis]
    pts = _split_points(n, indices_or_sections, equal)
    ax = axis + x.ndim if axis < 0 else axis
    out = []
    for lo, hi in zip(pts[:-1], pts[1:]):
        out.append(x[(slice(None),) * ax + (slice(lo, hi),)])
    return out


def split(ary, indices_or_sections, axis=0):
    """numpy.split: views of equal sections (ValueError if unequal) or split at indices."""
    return _split(ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: like split, but sections may differ in size by one."""
    return _split(ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """numpy.hsplit: split along axis 1 (axis 0 for 1-d)."""
    x = _arr(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """numpy.vsplit: split along axis 0 (ndim >= 2)."""
    x = _arr(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """numpy.dsplit: split along axis 2 (ndim >= 3)."""
    x = _arr(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def unstack(x, /, *, axis=0):
    """numpy.unstack: views of x along `axis` (a tuple)."""
    x = _arr(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return tuple(moveaxis(x, axis, 0))


def tile(A, reps):
    """numpy.tile: A repeated `reps` times per axis (a copy)."""
    try:
        tup = tuple(reps)
    except TypeError:
        tup = (reps,)
    tup = tuple(operator.index(t) for t in tup)
    x = _arr(A)
    d = len(tup)
    if all(t == 1 for t in tup) and x.ndim >= d:
        return x.copy()
    if x.ndim < d:
        x = x.reshape((1,) * (d - x.ndim) + x.shape)
    tup = (1,) * (x.ndim - d) + tup
    # Broadcast a new repetition axis before each axis, then fold it in.
    exp = x.reshape(tuple(v for s in x.shape for v in (1, s)))
    shape = tuple(v for t, s in zip(tup, x.shape) for v in (t, s))
    r = _op("broadcast_to", exp, shape).reshape(tuple(t * s for t, s in zip(tup, x.shape)))
    return r.copy() if r._storage_id == x._storage_id else r


def repeat(a, repeats, axis=None):
    """numpy.repeat: each element (along `axis`, flattened when None) repeated."""
    x = _arr(a)
    if isinstance(repeats, (ndarray, _np.ndarray)):
        r = _arr(repeats)
        if not _np.can_cast(r.dtype, _np.intp, "safe"):
            raise TypeError(f"Cannot cast array data from {r.dtype!r} to dtype('int64') according to the rule 'safe'")
    else:
        # Python and NumPy scalars and sequences are converted to intp as int() does.
        r = _np.asarray(repeats)
        r = _from_numpy(r.astype(_np.intp) if r.dtype.kind in "fb" and r.size else r)
    counts = _np.asarray(r)
    if counts.size and counts.dtype.kind in "iu":
        ax = _axis_or_none(axis)
        n = x.size if ax is None or not -x.ndim <= ax < x.ndim else x.shape[ax]
        total = float(counts.sum(dtype=_np.float64)) if counts.ndim else int(counts) * n
        if total * max(x.itemsize, 1) >= 2**63:
            raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                             "possible size.")
    return _op("repeat", x, r, _axis_or_none(axis))


def roll(a, shift, axis=None):
    """numpy.roll: elements shifted cyclically along `axis` (flattened when None)."""
    x = _arr(a)
    if not isinstance(shift, (int, ndarray)) and _np.asarray(shift).dtype.kind in "fb":
        shift = [int(s) for s in _np.ravel(shift)] if _np.ndim(shift) else int(shift)  # NumPy: int(shift)
    if axis is None:
        return _op("roll", x, _axes(shift), [])
    return _op("roll", x, _axes(shift), _axes(axis))


def rot90(m, k=1, axes=(0, 1)):
    """numpy.rot90: rotation by 90 degrees k times in the plane of `axes` (a view)."""
    x = _arr(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= x.ndim or axes[0] < -x.ndim or axes[1] >= x.ndim or axes[1] < -x.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    k = operator.index(k) % 4
    if k == 0:
        return x[:]
    if k == 2:
        return flip(flip(x, axes[0]), axes[1])
    perm = list(range(x.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return flip(x, axes[1]).transpose(perm)
    return flip(x.transpose(perm), axes[1])


def _pad_widths(pad_width, ndim):
    pw = _np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    pw = _np.broadcast_to(pw, (ndim, 2)).tolist()
    if any(v < 0 for p in pw for v in p):
        raise ValueError("index can't contain negative values")
    return pw


def _pad_index(n, before, after, mode):
    p = _np.arange(-before, n + after)
    if mode == "edge":
        return _np.clip(p, 0, n - 1)
    if mode == "wrap":
        return p % n
    if mode == "symmetric":
        m = p % (2 * n)
        return _np.where(m < n, m, 2 * n - 1 - m)
    if n == 1:  # reflect of a single element repeats it
        return _np.zeros_like(p)
    period = 2 * (n - 1)
    m = p % period
    return _np.where(m < n, m, period - m)


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad for modes constant, edge, reflect, symmetric and wrap (a copy); the other
    modes run on NumPy (a recorded fallback)."""
    x = _arr(array)
    native = ("constant", "edge", "reflect", "symmetric", "wrap")
    if not isinstance(mode, str) or mode not in native or kwargs.get("reflect_type", "even") != "even":
        return _numpy("pad", array, pad_width, mode, **kwargs)
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
    bad = set(kwargs) - allowed.get(mode, set())
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
    pw = _pad_widths(pad_width, x.ndim)
    if mode == "constant":
        # NumPy scalars, not Python ones: NumPy assigns them, so they cast unsafely (uint8 -1 -> 255).
        cv = _np.broadcast_to(_np.asarray(kwargs.get("constant_values", 0)), (x.ndim, 2))
        shape = tuple(s + b + a for s, (b, a) in zip(x.shape, pw))
        out = _core.empty(shape, x._code, _pad_order(x))
        for ax, ((b, a), (cb, ca)) in enumerate(zip(pw, cv)):
            pre = (slice(None),) * ax
            if b:
                out[pre + (slice(0, b),)] = cb
            if a:
                out[pre + (slice(shape[ax] - a, None),)] = ca
        out[tuple(slice(b, b + s) for s, (b, a) in zip(x.shape, pw))] = x
        return out
    out = x
    for ax, (b, a) in enumerate(pw):
        if b == 0 and a == 0:
            continue
        n = out.shape[ax]
        if n == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        idx = _from_numpy(_pad_index(n, b, a, mode).astype(_np.int64))
        out = out[(slice(None),) * ax + (idx,)]
    order = _pad_order(x)
    return out.copy(order) if out is x or order == "F" else out


def _pad_order(x):
    """NumPy's pad allocates its result F-ordered when the input is F- and not C-contiguous,
    C-ordered otherwise."""
    f = x.flags
    return "F" if f.f_contiguous and not f.c_contiguous else "C"


def resize(a, new_shape):
    """numpy.resize: a new array of `new_shape` filled by repeating a's flattened values."""
    x = _arr(a)
    try:
        new_shape = (operator.index(new_shape),)
    except TypeError:
        new_shape = tuple(operator.index(s) for s in new_shape)
    n = 1
    for s in new_shape:
        if s < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
        n *= s
    flat = ravel(x)
    if x.size == 0 or n == 0:
        return _core.zeros(new_shape, x._code, "C")
    reps = -(-n // x.size)
    return concatenate([flat] * reps)[:n].reshape(new_shape)


def append(arr, values, axis=None):
    """numpy.append: a copy with `values` appended (flattened when axis is None)."""
    x = _arr(arr)
    v = _arr(values)
    if axis is None:
        if x.ndim != 1:
            x = ravel(x)
        return concatenate((x, ravel(v)), axis=0)
    return concatenate((x, v), axis=axis)


def _normalize_obj(obj, n):
    if isinstance(obj, slice):
        return _np.arange(*obj.indices(n)), False
    o = _np.asarray(obj)
    if o.dtype == bool:
        if o.shape != (n,):
            raise ValueError(f"boolean array argument obj to delete must be one dimensional and match the axis "
                             f"length of {n}")
        return _np.nonzero(o)[0], False
    if o.size == 0 and o.dtype.kind not in "iu":
        o = o.astype(_np.intp)
    if o.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return o, o.ndim == 0


def delete(arr, obj, axis=None):
    """numpy.delete: a copy without the entries `obj` along `axis` (flattened when None)."""
    x = _arr(arr)
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = operator.index(axis)
    if x.ndim == 0:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    n = x.shape[ax]
    idx, _ = _normalize_obj(obj, n)
    idx = idx.ravel()
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"index {int(idx[bad][0])} is out of bounds for axis {ax} with size {n}")
    keep = _np.ones(n, bool)
    keep[idx] = False
    return x[(slice(None),) * ax + (_from_numpy(keep),)]


def insert(arr, obj, values, axis=None):
    """numpy.insert: a copy with `values` inserted before the indices `obj` along `axis`."""
    x = _arr(arr)
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = operator.index(axis)
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise _np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    n = x.shape[ax]
    idx, scalar = _normalize_obj(obj, n + 1)
    if isinstance(obj, slice):
        idx, scalar = _np.arange(*obj.indices(n)), False
    if not scalar and _np.ndim(idx) > 1:
        raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    v = _as_npc(_np.asarray(values, dtype=x.dtype) if not isinstance(values, ndarray) else values)
    v = v.astype(x.dtype) if v.dtype != x.dtype else v
    if not scalar and _np.size(idx) == 1 and not isinstance(obj, slice):
        # NumPy inserts all of `values` (at least x.ndim dimensions, not moved) at a
        # one-element index array: insert(arange(5), [1], [9, 8]) inserts two values.
        i = int(_np.ravel(idx)[0])
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        i = i + n if i < 0 else i
        if v.ndim < x.ndim:
            v = v.reshape((1,) * (x.ndim - v.ndim) + v.shape)
        shp = list(x.shape)
        shp[ax] = v.shape[ax]
        v = broadcast_to(v, tuple(shp))
        pre = (slice(None),) * ax
        return concatenate([x[pre + (slice(0, i),)], v, x[pre + (slice(i, None),)]], axis=ax)
    if scalar:
        i = int(idx)
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
        i = i + n if i < 0 else i
        v = moveaxis(v.reshape((1,) * (x.ndim - v.ndim) + v.shape) if v.ndim < x.ndim else v, 0, ax) \
            if v.ndim else v
        if v.ndim == 0:
            shp = list(x.shape)
            shp[ax] = 1
            v = broadcast_to(v, tuple(shp))
        else:
            shp = list(x.shape)
            shp[ax] = v.shape[ax]
            v = broadcast_to(v, tuple(shp))
        pre = (slice(None),) * ax
        return concatenate([x[pre + (slice(0, i),)], v, x[pre + (slice(i, None),)]], axis=ax)
    idx = idx.ravel().astype(_np.intp)
    if ((idx < -n) | (idx > n)).any():
        bad = idx[(idx < -n) | (idx > n)][0]
        raise IndexError(f"index {bad} is out of bounds for axis {ax} with size {n}")
    idx = _np.where(idx < 0, idx + n, idx)
    k = idx.size
    order = _np.argsort(idx, kind="stable")
    idx_sorted = idx[order]
    newn = n + k
    new_pos = idx_sorted + _np.arange(k)
    old_mask = _np.ones(newn, bool)
    old_mask[new_pos] = False
    shp = list(x.shape)
    shp[ax] = newn
    out = _core.empty(tuple(shp), x._code, "C")
    pre = (slice(None),) * ax
    out[pre + (_from_numpy(old_mask),)] = x
    vshape = list(x.shape)
    vshape[ax] = k
    # NumPy: values get at least x.ndim dimensions and are assigned to the k new slots, so
    # they broadcast there (leading length-1 dimensions dropped).
    if v.ndim < x.ndim:
        v = v.reshape((1,) * (x.ndim - v.ndim) + v.shape)
    while v.ndim > x.ndim and v.shape[0] == 1:
        v = v[0]
    try:
        vb = broadcast_to(v, tuple(vshape))
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be broadcast to indexing "
                         f"result of shape {tuple(vshape)}") from None
    out[pre + (_from_numpy(new_pos[_np.argsort(order, kind="stable")].astype(_np.int64)),)] = vb
    return out


def trim_zeros(filt, trim="fb", axis=None):
    """numpy.trim_zeros: leading ('f') and/or trailing ('b') zeros removed (a view)."""
    x = _arr(filt)
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    # NumPy's axis errors (AxisError, OverflowError beyond C long, TypeError).
    axes = range(x.ndim) if axis is None else _np_normalize_axis_tuple(axis, x.ndim, argname="axis")
    if x.ndim == 0:
        return x[...]
    nz = _core._nonzero(x)
    key = [slice(None)] * x.ndim
    for ax in axes:
        pos = _np.asarray(nz[ax])
        if pos.size == 0:
            key[ax] = slice(0, 0)
            continue
        lo = int(pos.min()) if "f" in trim else 0
        hi = int(pos.max()) + 1 if "b" in trim else x.shape[ax]
        key[ax] = slice(lo, hi)
    return x[tuple(key)]


def copyto(dst, src, casting="same_kind", where=True):
    """numpy.copyto: src broadcast into dst, cast under `casting` (TypeError when forbidden,
    OverflowError for Python ints out of range); `where` selects the elements written."""
    if not isinstance(dst, ndarray):
        raise TypeError("copyto() argument 1 must be a numpy.ndarray, not " + type(dst).__name__)
    if _scalar_result(dst):  # Note [writes into scalar results]
        raise TypeError("copyto() argument 1 must be a numpy.ndarray, not " + _scalar_type_name(dst))
    if type(src) in (int, float, complex, bool):
        # NEP 50: a Python scalar is weak; NumPy decides its cast on a 0-d stand-in (no data work).
        probe = _np.empty((), dst.dtype)
        _np.copyto(probe, src, casting=casting)
        s = _from_numpy(probe)
    else:
        s = _arr(src)
        if not _np.can_cast(s.dtype, dst.dtype, casting):
            raise TypeError(f"Cannot cast array data from {s.dtype!r} to {dst.dtype!r} according to the rule "
                            f"{casting!r}")
    if where is True:
        dst[...] = broadcast_to(s, dst.shape)
        return
    w = broadcast_to(_arr(where), dst.shape)
    if w.dtype != _np.bool_:
        raise TypeError(f"Cannot cast array data from {w.dtype!r} to dtype('bool') according to the rule 'safe'")
    dst[w] = broadcast_to(s, dst.shape)[w]


def _extent(x):
    lo = hi = x._data_ptr
    for n, s in zip(x.shape, x.strides):
        if n == 0:
            return None
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + x.itemsize


def may_share_memory(a, b, /, max_work=0):
    """numpy.may_share_memory: whether the memory extents of a and b overlap."""
    if not isinstance(a, ndarray) or not isinstance(b, ndarray):
        return _np.may_share_memory(_np.asarray(a), _np.asarray(b))
    ea, eb = _extent(a), _extent(b)
    if ea is None or eb is None:
        return False
    return ea[0] < eb[1] and eb[0] < ea[1]


def shares_memory(a, b, /, max_work=None):
    """numpy.shares_memory: exact answer (NumPy's solver on zero-copy NumPy views)."""
    if isinstance(a, ndarray):
        a = _np.asarray(memoryview(a))
    if isinstance(b, ndarray):
        b = _np.asarray(memoryview(b))
    return _np.shares_memory(a, b, max_work=max_work)


def shape(a):
    """numpy.shape."""
    return a.shape if isinstance(a, ndarray) else _np.shape(a)


def ndim(a):
    """numpy.ndim."""
    return a.ndim if isinstance(a, ndarray) else _np.ndim(a)


def size(a, axis=None):
    """numpy.size."""
    if isinstance(a, ndarray):
        return a.size if axis is None else a.shape[axis]
    return _np.size(a, axis)


# ---------------------------------------------------------------- ndarray methods
def _m_ravel(self, order="C"):
    return ravel(self, order)


def _m_flatten(self, order="C"):
    r = ravel(self, order)
    return r.copy() if r._storage_id == self._storage_id else r


def _m_squeeze(self, axis=None):
    return squeeze(self, axis)


def _m_swapaxes(self, axis1, axis2):
    return swapaxes(self, axis1, axis2)


def _m_repeat(self, repeats, axis=None):
    return repeat(self, repeats, axis)


def _m_resize(self, *new_shape, refcheck=True):
    raise ValueError("cannot resize this array: it does not own its data")


for _name, _fn in {"ravel": _m_ravel, "flatten": _m_flatten, "squeeze": _m_squeeze, "swapaxes": _m_swapaxes,
                   "repeat": _m_repeat}.items():
    setattr(ndarray, _name, _fn)
ndarray.mT = property(matrix_transpose, doc="numpy.ndarray.mT: transpose of the last two axes.")

_wrap_all(globals())
