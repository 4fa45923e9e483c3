"""Matrix and tensor products: matmul (``@``), dot, vdot, inner, outer, tensordot, einsum,
kron, matrix_transpose, vecdot, matvec, vecmat.

Every product reduces to one batched matrix multiply in C++ (``npc::matmul``, on OpenBLAS
for float32/64 and complex64/128, exact native loops for bool, integers and float16) after
transposes and reshapes, which are views whenever the strides allow. Arguments npc does
not handle natively (non-native dtypes, ``out=`` of another dtype, ufunc keywords such as
``axes=``) run on NumPy through the fallback, with identical results.
"""
import functools
import operator

import numpy as _np

from . import _core
from ._array import _check_scalar_out, _wrap_ufunc_result, ndarray
from ._creation import asarray, ones
from ._fallback import NotNative, call as _fallback_call

_linalg_call = _core._linalg
_fast_product = _core._fast_product

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "cross",
           "matrix_transpose", "vecdot", "matvec", "vecmat"]


def _native(np_func, qualname=None):
    """Runs the native body; NotNative (arguments npc does not handle) runs NumPy's
    `np_func` through the fallback instead (counted and logged as a fallback). When `np_func`
    is a ufunc (matmul, vecdot, matvec, vecmat), results for instances of Python subclasses
    of npc.ndarray are wrapped as ufuncs wrap them (Note [ndarray subclasses] in _array.py)."""
    name = qualname or "npc." + np_func.__name__
    is_ufunc = isinstance(np_func, _np.ufunc)

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                r = fn(*args, **kwargs)
            except NotNative:
                return _fallback_call(name, np_func, args, kwargs)
            if is_ufunc and len(args) >= 2 and kwargs.get("out") is None and len(args) < 3:
                return _wrap_ufunc_result(r, args[:2])
            return r
        wrapper.__doc__ = fn.__doc__
        return wrapper
    return deco


def _arr(x):
    """npc array for `x`, or NotNative when its dtype is not native to npc."""
    if isinstance(x, ndarray):
        return x  # subclasses of npc.ndarray included (Note [ndarray subclasses] in _array.py)
    if isinstance(x, _np.ndarray) and type(x) is not _np.ndarray:
        raise NotNative  # subclasses (matrix, masked arrays) keep NumPy's semantics
    try:
        a = asarray(x)
    except (TypeError, ValueError):
        raise NotNative from None
    if type(a) is not ndarray:
        raise NotNative
    return a


def _result(r, out=None, dtype=None):
    """0-d results as NumPy scalars (as NumPy's eager products return); `out=`/`dtype=`."""
    if dtype is not None:
        dt = _np.dtype(dtype)
        if r.dtype != dt:
            if not _np.can_cast(r.dtype, dt, "same_kind"):
                raise NotNative  # NumPy raises its UFuncTypeError with its message
            r = r.astype(dt)
    if out is not None:
        if type(out) is tuple:
            if len(out) != 1:
                raise NotNative
            out = out[0]
        if type(out) is not ndarray:
            raise NotNative
        if out.shape != r.shape or not _np.can_cast(r.dtype, out.dtype, "same_kind"):
            raise NotNative
        _core._copy_into(out, r)
        return out
    if r.ndim == 0:
        return r[()]
    return r


def _mm(a, b, where=""):
    # numpy.matmul's paths (Note [NumPy's product paths] in src/ops/matmul.cpp). `where`: the
    # name NumPy gives the product's floating-point errors ("matmul", "dot"), or "" for none;
    # a traced product records it (Note [matmul in traces]).
    return _linalg_call("matmul", a, b, where)


_BLAS_KINDS = frozenset(_np.dtype(t) for t in (_np.float32, _np.float64, _np.complex64, _np.complex128))


def _dot(a, b):
    """numpy.dot of npc arrays with at least one dimension each: NumPy's paths (npc::dot,
    Note [NumPy's product paths] in src/ops/matmul.cpp) and its errors "in dot"."""
    if a.ndim <= 2 and b.ndim <= 2:
        return _linalg_call("dot", a, b)
    # Traced too: an N-D dot node (Note [N-D dot in traces] in csrc/bind_linalg.cpp).
    if _np.promote_types(a.dtype, b.dtype) in _BLAS_KINDS:
        return _linalg_call("dot", a, b)
    # An exact dtype (any order of its sums gives the same bits): one matmul.
    ka = a.shape[-1]
    if b.ndim <= 2:
        return _mm(a.reshape(-1, ka), b, "dot").reshape(a.shape[:-1] + b.shape[1:])
    return _tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def _conj(a):
    return a.conj() if a.dtype.kind == "c" else a


def _moveaxis_to_end(a, axis):
    nd = a.ndim
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise _np.exceptions.AxisError(axis, nd)
    axis %= nd
    perm = [i for i in range(nd) if i != axis] + [axis]
    return a.transpose(perm)


@_native(_np.matmul)
def matmul(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Matrix product of two arrays (numpy.matmul).

    Parameters
    ----------
    x1, x2 : array_like
        Shapes ``(..., n, k)`` and ``(..., k, m)``; the batch dimensions broadcast. A 1-D
        ``x1`` is a row vector and a 1-D ``x2`` a column vector, their dimension removed
        from the result. Scalars are not allowed.
    out : ndarray, optional
        Where to write the result (shape ``(..., n, m)``).
    dtype : dtype, optional
        Result dtype (cast from the promoted dtype with ``same_kind``).

    Returns
    -------
    ndarray or scalar
        dtype ``promote_types(x1.dtype, x2.dtype)``; a NumPy scalar for two 1-D inputs.

    Raises
    ------
    ValueError
        0-d operands, or core dimensions ``k`` that differ (NumPy's gufunc messages).
    """
    _check_scalar_out(out)  # a gufunc's out: Note [writes into scalar results]
    if out is not None and not isinstance(out, (ndarray, _np.ndarray, tuple)):
        raise TypeError("return arrays must be of ArrayType")  # NumPy's ufunc check of out=
    if out is None and dtype is None and casting == "same_kind" and order == "K" and subok \
            and signature is None and axes is None and axis is None:
        r = _fast_product(x1, x2)  # Note [fast products] in csrc/bind_linalg.cpp
        if r is not None:
            return r
    if casting != "same_kind" or order != "K" or not subok or signature is not None \
            or axes is not None or axis is not None:
        raise NotNative
    a, b = _arr(x1), _arr(x2)
    return _result(_mm(a, b, "matmul"), out, dtype)


def _matmul_op(self, other):
    if _core._overrides_ufuncs(other):  # a Dask array, ... (Note [foreign ufunc overrides])
        return _np.matmul(self, other)
    try:
        return matmul(self, other)
    except TypeError:
        return NotImplemented


def _rmatmul_op(self, other):
    if _core._overrides_ufuncs(other):
        return _np.matmul(other, self)
    try:
        return matmul(other, self)
    except TypeError:
        return NotImplemented


def _imatmul_op(self, other):
    # As NumPy: `a @= b` is matmul(a, b, out=a) (NumPy's errors for shapes and casts), whose
    # axes argument needs a `b` of two dimensions or more: a 1-D `b` is NumPy's ValueError
    # (array_inplace_matrix_multiply turns the axes' AxisError into it).
    if self.ndim >= 1 and _np.ndim(other) == 1:
        raise ValueError("inplace matrix multiplication requires the first operand to have at least one "
                         "and the second at least two dimensions.")
    return matmul(self, other, out=self)


ndarray.__matmul__ = _matmul_op
ndarray.__rmatmul__ = _rmatmul_op
ndarray.__imatmul__ = _imatmul_op


@_native(_np.dot)
def dot(a, b, out=None):
    """Dot product (numpy.dot).

    1-D x 1-D: inner product (a scalar); 2-D x 2-D: matrix product; N-D x 1-D: sum over the
    last axes; N-D x M-D (M >= 2): ``dot(a, b)[i,j,k,m] = sum(a[i,j,:] * b[k,:,m])``; a 0-d
    operand multiplies elementwise. dtype: ``promote_types``. ValueError "shapes ... not
    aligned" when the summed dimensions differ.
    """
    _check_scalar_out(out, "'out' must be an array")  # Note [writes into scalar results]
    a = _arr(a)
    b = _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        if out is not None:
            raise NotNative
        from ._ufunc import multiply
        return multiply(a, b)
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        bd = 0 if b.ndim == 1 else b.ndim - 2
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {ka} (dim {a.ndim - 1}) != {kb} (dim {bd})")
    r = _dot(a, b)
    if out is not None:
        _check_dot_out(out, r)
    return _result(r, out)


# Note [product FP errors]: NumPy reports the floating-point flags of the calling thread
# after its product loops and BLAS calls: numpy.matmul through its ufunc machinery ("...
# encountered in matmul"), numpy.dot, inner and tensordot after cblas_matrixproduct or their
# dot loop ("... in dot"); all four kinds, under numpy.errstate. Flags raised in OpenBLAS's
# worker threads (large products) never reach that thread, in NumPy as in npc. npc takes
# NumPy's paths with NumPy's OpenBLAS (Note [NumPy's product paths] in src/ops/matmul.cpp),
# reads the same flags (npc::take_product_fp_flags) and reports them under the same name
# (the "matmul" and "dot" entries of _core._linalg; compiled code: Note [library call fp
# errors] in src/fusion/backend.cpp).


def _check_dot_out(out, r):
    """numpy.dot's rule for `out`: exactly the result's dtype and number of dimensions, C
    contiguous and writeable (no casting, unlike the ufuncs), then the same shape."""
    if type(out) is not ndarray:
        raise NotNative
    if out.ndim != r.ndim or out.dtype != r.dtype or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("output array is not acceptable (must have the right datatype, number of dimensions, "
                         "and be a C-Array)")
    if out.shape != r.shape:
        raise ValueError("output array has wrong dimensions")


@_native(_np.vdot)
def vdot(a, b, /):
    """Dot product of the flattened arrays, conjugating the first (numpy.vdot).

    Returns a NumPy scalar of dtype ``promote_types``; ValueError when the sizes differ.
    """
    a = _arr(a)
    b = _arr(b)
    if a.size != b.size:
        raise NotNative  # NumPy's message
    return _result(_mm(_conj(a).reshape(-1), b.reshape(-1), ""))


@_native(_np.inner)
def inner(a, b, /):
    """Inner product over the last axes (numpy.inner): result shape
    ``a.shape[:-1] + b.shape[:-1]``; ValueError when the last dimensions differ."""
    a = _arr(a)
    b = _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        from ._ufunc import multiply
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    k = a.shape[-1]
    if a.ndim <= 2 and b.ndim <= 2:  # numpy.inner is numpy.dot(a, b.T) (its last two axes swapped)
        return _result(_linalg_call("dot", a, b.T if b.ndim == 2 else b))
    if _np.promote_types(a.dtype, b.dtype) in _BLAS_KINDS:  # traced too: Note [N-D dot in traces]
        return _result(_linalg_call("dot", a, b.swapaxes(-1, -2) if b.ndim >= 2 else b))
    r = _mm(a.reshape(-1, k), b.reshape(-1, k).T, "dot")
    return _result(r.reshape(a.shape[:-1] + b.shape[:-1]))


@_native(_np.outer)
def outer(a, b, out=None):
    """Outer product of the flattened inputs (numpy.outer): shape ``(a.size, b.size)``,
    dtype ``promote_types`` (bool: logical and).

    Computed as NumPy defines it, ``multiply(a.ravel()[:, None], b.ravel()[None, :], out)``:
    the same values, ``out=`` casting, and floating-point errors reported "in multiply"
    (eagerly, and as graph nodes inside npc.compile).
    """
    from ._ufunc import multiply
    a, b = _arr(a), _arr(b)
    return multiply(a.ravel()[:, None], b.ravel()[None, :], out=out)


def _tensordot(a, b, axes):
    axes_a, axes_b = axes
    na, nb = a.ndim, b.ndim
    axes_a = [operator.index(x) % na if na else operator.index(x) for x in axes_a]
    axes_b = [operator.index(x) % nb if nb else operator.index(x) for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(na) if i not in axes_a]
    free_b = [j for j in range(nb) if j not in axes_b]
    k = 1
    for i in axes_a:
        k *= a.shape[i]
    m1 = 1
    for i in free_a:
        m1 *= a.shape[i]
    m2 = 1
    for j in free_b:
        m2 *= b.shape[j]
    at = a.transpose(free_a + axes_a).reshape(m1, k)
    bt = b.transpose(axes_b + free_b).reshape(k, m2)
    r = _linalg_call("dot", at, bt)  # numpy.tensordot is numpy.dot of the reshaped operands
    return r.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


@_native(_np.tensordot)
def tensordot(a, b, axes=2):
    """Tensor dot product over the given axes (numpy.tensordot).

    `axes`: an int N (the last N axes of `a` with the first N of `b`) or a pair of axis
    sequences. Result shape: free axes of `a`, then free axes of `b`. ValueError
    "shape-mismatch for sum" when the summed dimensions differ.
    """
    a = _arr(a)
    b = _arr(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        axes_a = list(range(a.ndim - n, a.ndim)) if n > 0 else []
        axes_b = list(range(0, n)) if n > 0 else []
        if n < 0:
            raise NotNative
    else:
        axes_a, axes_b = axes
        try:
            axes_a = list(axes_a)
        except TypeError:
            axes_a = [axes_a]
        try:
            axes_b = list(axes_b)
        except TypeError:
            axes_b = [axes_b]
    if len(axes_a) != len(axes_b) or any(not -a.ndim <= x < max(a.ndim, 1) for x in axes_a) \
            or any(not -b.ndim <= x < max(b.ndim, 1) for x in axes_b):
        raise NotNative  # NumPy's own error messages
    return _tensordot(a, b, (axes_a, axes_b))  # NumPy's tensordot returns 0-d arrays, not scalars


@_native(_np.kron)
def kron(a, b):
    """Kronecker product (numpy.kron): blocks ``a[i, j] * b``; shape is the elementwise
    product of the shapes (the shorter one padded with leading 1s).

    NumPy's definition: one ``multiply`` of the operands with interleaved size-1 axes, then
    a reshape, so values, dtypes and floating-point errors ("... in multiply") are NumPy's.
    """
    from ._ufunc import multiply
    a = _arr(a)
    b = _arr(b)
    if b.ndim == 0:
        return multiply(a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    a2 = a.reshape(tuple(d for s in sa for d in (s, 1)))
    b2 = b.reshape(tuple(d for s in sb for d in (1, s)))
    return multiply(a2, b2).reshape(tuple(x * y for x, y in zip(sa, sb)))


def _normalize_axis(axis, ndim, prefix):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise _np.exceptions.AxisError(axis, ndim, msg_prefix=prefix)
    return axis % ndim


def _moveaxis(a, src, dst):
    perm = [i for i in range(a.ndim) if i != src]
    perm.insert(dst % a.ndim if dst >= 0 else a.ndim + dst, src)
    return a.transpose(perm)


@_native(_np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors along an axis (numpy.cross), with broadcasting of the
    other dimensions: (a1*b2 - a2*b1, a2*b0 - a0*b2, a0*b1 - a1*b0), computed with npc's
    multiply and subtract in NumPy's order. ValueError for vectors of another length."""
    from . import _ufunc
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a = _arr(a)
    b = _arr(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = _moveaxis(a, _normalize_axis(axisa, a.ndim, "axisa"), -1)
    b = _moveaxis(b, _normalize_axis(axisb, b.ndim, "axisb"), -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{a.shape[-1]} and {b.shape[-1]} dimensional instead.")
    shape = (*_np.broadcast_shapes(a.shape[:-1], b.shape[:-1]), 3)
    axisc = _normalize_axis(axisc, len(shape), "axisc")
    dt = _np.promote_types(a.dtype, b.dtype)
    if dt == _np.bool_:
        raise NotNative  # NumPy's subtract of booleans raises its own TypeError
    from ._creation import empty
    # A leading unit axis keeps every component an array (1-D inputs would give scalars).
    cp_full = empty((1,) + shape, dtype=dt)
    cp = cp_full[0]
    a = (a if a.dtype == dt else a.astype(dt)).reshape((1,) + a.shape)
    b = (b if b.dtype == dt else b.astype(dt)).reshape((1,) + b.shape)
    mul, sub = _ufunc.multiply, _ufunc.subtract
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    for k, (x, y, u, v) in enumerate(((a1, b2, a2, b1), (a2, b0, a0, b2), (a0, b1, a1, b0))):
        ck = cp_full[..., k]
        mul(x, y, out=ck)
        sub(ck, mul(u, v), out=ck)
    return _moveaxis(cp, cp.ndim - 1, axisc) if axisc != cp.ndim - 1 else cp


@_native(_np.matrix_transpose)
def matrix_transpose(x, /):
    """Swaps the last two axes (numpy.matrix_transpose): a view.
    ValueError for arrays with fewer than 2 dimensions."""
    x = _arr(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return x.transpose(perm)


def _gufunc_kwargs_native(out, casting, order, subok, signature, axes, extra=()):
    _check_scalar_out(out)  # Note [writes into scalar results] in csrc/bind_ndarray.cpp
    if casting != "same_kind" or order != "K" or not subok or signature is not None or axes is not None \
            or any(e is not None for e in extra):
        raise NotNative


@_native(_np.vecdot)
def vecdot(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Vector dot product over an axis, conjugating the first argument (numpy.vecdot):
    ``sum(conj(x1) * x2, axis=-1)`` with broadcasting of the other dimensions."""
    _gufunc_kwargs_native(out, casting, order, subok, signature, axes)
    a = _arr(x1)
    b = _arr(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise NotNative
    if axis is not None:
        a = _moveaxis_to_end(a, axis)
        b = _moveaxis_to_end(b, axis)
    if a.shape[-1] != b.shape[-1]:
        raise NotNative  # NumPy's gufunc message
    r = _mm(_conj(a).reshape(a.shape[:-1] + (1, a.shape[-1])), b.reshape(b.shape + (1,)))
    r = r.reshape(r.shape[:-2])
    return _result(r, out, dtype)


@_native(_np.matvec)
def matvec(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Matrix-vector product (numpy.matvec): ``(..., m, n)`` x ``(..., n)`` -> ``(..., m)``."""
    _gufunc_kwargs_native(out, casting, order, subok, signature, axes, (axis,))
    a = _arr(x1)
    b = _arr(x2)
    if a.ndim < 2 or b.ndim < 1 or a.shape[-1] != b.shape[-1]:
        raise NotNative
    r = _mm(a, b.reshape(b.shape + (1,)))
    return _result(r.reshape(r.shape[:-1]), out, dtype)


@_native(_np.vecmat)
def vecmat(x1, x2, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True,
           signature=None, axes=None, axis=None):
    """Vector-matrix product (numpy.vecmat), conjugating the vector:
    ``(..., n)`` x ``(..., n, m)`` -> ``(..., m)``."""
    _gufunc_kwargs_native(out, casting, order, subok, signature, axes, (axis,))
    a = _arr(x1)
    b = _arr(x2)
    if a.ndim < 1 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise NotNative
    r = _mm(_conj(a).reshape(a.shape[:-1] + (1, a.shape[-1])), b)
    return _result(r.reshape(r.shape[:-2] + r.shape[-1:]), out, dtype)




# ---------------------------------------------------------------- einsum
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(subscripts, shapes):
    """Input label strings and the output label string, with each ellipsis replaced by
    labels of its own (right-aligned, so broadcasting lines up)."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, outs = s.split("->")
        explicit = True
    else:
        ins, outs, explicit = s, None, False
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise NotNative
    used = set(c for c in s if c.isalpha())
    pool = [c for c in _LETTERS if c not in used]
    max_ell = 0
    parsed = []
    for t, shp in zip(terms, shapes):
        if "." in t:
            if t.count("...") != 1 or t.count(".") != 3:
                raise NotNative
            n = len(shp) - (len(t) - 3)
            if n < 0:
                raise NotNative
            max_ell = max(max_ell, n)
            parsed.append((t, n))
        else:
            parsed.append((t, 0))
    if len(pool) < max_ell:
        raise NotNative
    ell = pool[:max_ell]
    labels = []
    for (t, n), shp in zip(parsed, shapes):
        t2 = t.replace("...", "".join(ell[max_ell - n:])) if "..." in t else t
        if len(t2) != len(shp) or not all(c.isalpha() for c in t2):
            raise NotNative
        labels.append(t2)
    if explicit:
        if "..." in outs:
            outs = outs.replace("...", "".join(ell))
        if not all(c.isalpha() for c in outs) or len(set(outs)) != len(outs):
            raise NotNative
        if any(c not in "".join(labels) for c in outs):
            raise NotNative
    else:
        counts = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        outs = "".join(ell) + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return labels, outs


def _sum_out(x, lab, drop):
    """Sums `x` (labels `lab`) over the labels in `drop` (a matrix-vector product)."""
    if not drop:
        return x, lab
    keep = [i for i, c in enumerate(lab) if c not in drop]
    gone = [i for i, c in enumerate(lab) if c in drop]
    k = 1
    for i in gone:
        k *= x.shape[i]
    kshape = tuple(x.shape[i] for i in keep)
    m = 1
    for d in kshape:
        m *= d
    xt = x.transpose(keep + gone).reshape(m, k)
    r = _mm(xt, ones(k, dtype=x.dtype)).reshape(kshape)
    return r, "".join(lab[i] for i in keep)


# Contractions over at most this many elements (the product of the summed labels' sizes) run
# as NumPy's sum-of-products loop (Note [einsum sum of products] in src/ops/einsum.cpp), larger
# ones as matrix products.
_SUM_OF_PRODUCTS_MAX = 32


def _contract(a, la, b, lb, keep, order=None):
    """Contracts two operands over their labels that are not in `keep`: the result and its
    labels, in the order `order` when it names exactly the labels the result keeps."""
    if a.dtype.char in "fdFD" and b.dtype == a.dtype:
        summed = {c for c in la + lb if c not in keep}
        k = 1
        for x, lab in ((a, la), (b, lb)):
            for c, d in zip(lab, x.shape):
                if c in summed:
                    k *= d
                    summed.discard(c)
        if k <= _SUM_OF_PRODUCTS_MAX:
            kept = [c for c in la if c in keep] + [c for c in lb if c in keep and c not in la]
            lo = order if order is not None and sorted(order) == sorted(kept) else "".join(kept)
            if lo:
                r = _linalg_call("einsum_pair", a, la, b, lb, lo)
                if r is not None:
                    return r, lo
    a, la = _sum_out(a, la, {c for c in la if c not in lb and c not in keep})
    b, lb = _sum_out(b, lb, {c for c in lb if c not in la and c not in keep})
    batch = [c for c in la if c in lb and c in keep]
    con = [c for c in la if c in lb and c not in keep]
    fa = [c for c in la if c not in lb]
    fb = [c for c in lb if c not in la]
    da = dict(zip(la, a.shape))
    db = dict(zip(lb, b.shape))

    def prod(ds):
        r = 1
        for d in ds:
            r *= d
        return r
    bshape = tuple(da[c] for c in batch)
    k = prod(da[c] for c in con)
    at = a.transpose([la.index(c) for c in batch + fa + con]).reshape(bshape + (prod(da[c] for c in fa), k))
    bt = b.transpose([lb.index(c) for c in batch + con + fb]).reshape(bshape + (k, prod(db[c] for c in fb)))
    r = _mm(at, bt).reshape(bshape + tuple(da[c] for c in fa) + tuple(db[c] for c in fb))
    return r, "".join(batch + fa + fb)


def _take_diagonals(ops, labels):
    """A label repeated within one operand ("ii") selects its diagonal: a strided view
    (npc.diagonal), the label then appearing once, last."""
    from ._indexing import diagonal
    out_ops, out_labels = [], []
    for x, lab in zip(ops, labels):
        while len(set(lab)) != len(lab):
            c = next(c for c in lab if lab.count(c) > 1)
            i = lab.index(c)
            j = lab.index(c, i + 1)
            if x.shape[i] != x.shape[j]:
                raise NotNative  # NumPy's dimension-mismatch error
            w = x._flags[3]
            x = diagonal(x, 0, i, j)
            if w:
                # numpy.einsum's diagonal ("ii->i") is a writeable view, unlike numpy.diagonal.
                x.flags.writeable = True
            lab = "".join(ch for k, ch in enumerate(lab) if k not in (i, j)) + c
        out_ops.append(x)
        out_labels.append(lab)
    return out_ops, out_labels


def _squeeze_broadcast(ops, labels):
    """Size-1 dimensions whose label has a larger size elsewhere are constant along that
    label: drop them (einsum broadcasting)."""
    size = {}
    for x, lab in zip(ops, labels):
        for c, d in zip(lab, x.shape):
            if d != 1:
                if size.get(c, d) != d:
                    raise NotNative  # NumPy's shape-mismatch error
                size[c] = d
    out_ops, out_labels = [], []
    for x, lab in zip(ops, labels):
        drop = [i for i, (c, d) in enumerate(zip(lab, x.shape)) if d == 1 and size.get(c, 1) != 1]
        if drop:
            x = x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in drop))
            lab = "".join(c for i, c in enumerate(lab) if i not in drop)
        out_ops.append(x)
        out_labels.append(lab)
    return out_ops, out_labels, size


@_native(_np.einsum)
def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """Einstein summation (numpy.einsum), as a sequence of pairwise batched matrix products.

    Parameters
    ----------
    subscripts : str
        Labels per operand, comma-separated, with an optional ``->output``; ``...``
        broadcasts. Without ``->`` the output holds the labels seen once, sorted.
    *operands : array_like
    optimize : {False, True, "greedy", "optimal"} or list
        Contraction order: False contracts left to right; otherwise the order chosen by
        numpy.einsum_path with this setting (or the given path).

    Returns
    -------
    ndarray or scalar
        dtype: the result type of the operands.

    Raises
    ------
    ValueError
        Mismatched dimensions or invalid subscripts (NumPy's messages, NumPy's check).

    A label repeated within one operand takes that operand's diagonal. The interleaved
    (operand, sublist) form and the `dtype`/`order`/`casting` keywords run on NumPy.
    """
    if not isinstance(subscripts, str) or dtype is not None or order != "K" or casting != "safe":
        raise NotNative
    ops = [_arr(x) for x in operands]
    if not ops:
        raise NotNative
    first = list(ops)
    labels, outs = _parse_einsum(subscripts, [x.shape for x in ops])
    ops, labels = _take_diagonals(ops, labels)
    dt = _np.result_type(*[x.dtype for x in ops])
    ops = [x if x.dtype == dt else x.astype(dt) for x in ops]
    ops, labels, _ = _squeeze_broadcast(ops, labels)
    if optimize is False or len(ops) <= 2:
        path = [(0, 1)] * (len(ops) - 1)
    else:
        dummies = [_np.broadcast_to(_np.empty((), dtype=dt), x.shape) for x in ops]
        sub = ",".join(labels) + "->" + outs
        p = optimize if isinstance(optimize, list) else _np.einsum_path(sub, *dummies, optimize=optimize)[0]
        path = [tuple(c) for c in p[1:]]
    ops, labels = list(ops), list(labels)
    for step in path:
        if len(step) == 1:
            continue
        if len(step) != 2:
            raise NotNative
        i, j = sorted(step)
        b, lb = ops.pop(j), labels.pop(j)
        a, la = ops.pop(i), labels.pop(i)
        keep = set(outs).union(*[set(t) for t in labels])
        r, lr = _contract(a, la, b, lb, keep, outs if not ops else None)
        ops.append(r)
        labels.append(lr)
    while len(ops) > 1:  # anything a partial path left over
        keep = set(outs).union(*[set(t) for t in labels[2:]])
        r, lr = _contract(ops[0], labels[0], ops[1], labels[1], keep, outs if len(ops) == 2 else None)
        ops = [r] + ops[2:]
        labels = [lr] + labels[2:]
    x, lab = _sum_out(ops[0], labels[0], {c for c in labels[0] if c not in outs})
    missing = [c for c in outs if c not in lab]
    if missing:
        raise NotNative  # an output label only seen with size 1 and squeezed: NumPy handles
    r = x.transpose([lab.index(c) for c in outs]) if lab != outs else x
    if any(r is o for o in operands) or any(r is o for o in first):
        r = r.view()  # a new view even when nothing changes ("ij"), as NumPy
    return _result(r, out)
