"""npc.linalg: the namespace of numpy.linalg, on LAPACK (LAPACKE/OpenBLAS).

Native: solve, inv, det, slogdet, cholesky, eigh, eigvalsh, eig, eigvals, svd, svdvals,
qr, lstsq, matrix_power, multi_dot, pinv, matrix_rank, cond, tensorsolve, tensorinv, norm,
vector_norm, matrix_norm, outer, matmul, tensordot, vecdot, matrix_transpose, trace,
diagonal. Stacked matrices (..., M, N) everywhere NumPy accepts them; dtypes as NumPy's
(integers compute in float64; float32/complex64 compute in double precision and return
single, as numpy.linalg does); ``numpy.linalg.LinAlgError`` with NumPy's messages.

Arguments npc does not handle natively (non-native dtypes, ``hermitian=True``, qr's
``mode="raw"``) run NumPy's function through the fallback; every other name of
numpy.linalg resolves to a fallback that runs NumPy (see npc._fallback).
"""
import functools as _functools
import operator as _operator
from collections import namedtuple as _namedtuple

import numpy as _np
from numpy.linalg import LinAlgError  # noqa: F401  (NumPy's class: `except` clauses keep working)

from .. import _core
from .._array import ndarray as _ndarray
from .._creation import asarray as _asarray, empty as _empty, eye as _eye
from .._fallback import NotNative as _NotNative, call as _fallback_call, install as _install
from .. import _linalg as _products

_NPLA = _np.linalg
_native_ok = _core._lapack_available()

EigResult = _NPLA._linalg.EigResult if hasattr(_NPLA, "_linalg") else _namedtuple("EigResult", "eigenvalues eigenvectors")
EighResult = _NPLA._linalg.EighResult
QRResult = _NPLA._linalg.QRResult
SlogdetResult = _NPLA._linalg.SlogdetResult
SVDResult = _NPLA._linalg.SVDResult


def _native(name):
    """The native body, or NumPy's numpy.linalg.<name> on NotNative (a counted fallback)."""
    np_func = getattr(_NPLA, name)

    def deco(fn):
        @_functools.wraps(np_func)
        def wrapper(*args, **kwargs):
            if _native_ok:
                try:
                    return fn(*args, **kwargs)
                except _NotNative:
                    pass
            return _fallback_call("npc.linalg." + name, np_func, args, kwargs)
        wrapper.__doc__ = (fn.__doc__ or "") + "\n\nNumPy's documentation:\n" + (np_func.__doc__ or "")
        wrapper.__module__ = __name__  # pickles as npc.linalg.<name>
        wrapper.__qualname__ = name
        return wrapper
    return deco


def _arr(x):
    if type(x) is _ndarray:
        return x
    if isinstance(x, _np.ndarray) and type(x) is not _np.ndarray:
        raise _NotNative
    try:
        a = _asarray(x)
    except (TypeError, ValueError):
        raise _NotNative from None
    if type(a) is not _ndarray:
        raise _NotNative
    return a


_F32, _F64 = _np.dtype(_np.float32), _np.dtype(_np.float64)
_C64, _C128 = _np.dtype(_np.complex64), _np.dtype(_np.complex128)


def _common_type(*arrays):
    """(computation dtype, result dtype) as numpy.linalg's _commonType: computations run in
    float64/complex128; the result is single precision only when every input is."""
    result = _F32
    is_complex = False
    for a in arrays:
        k = a.dtype.kind
        if k in "fc":
            if k == "c":
                is_complex = True
            if a.dtype in (_F64, _C128):
                result = _F64
            elif a.dtype not in (_F32, _C64):
                raise TypeError(f"array type {a.dtype.name} is unsupported in linalg")
        else:
            result = _F64
    if is_complex:
        return _C128, (_C128 if result == _F64 else _C64)
    return _F64, result


def _real(dt):
    return {_C64: _F32, _C128: _F64}.get(dt, dt)


def _as(a, dt):
    return a if a.dtype == dt else a.astype(dt)


def _out(a, dt):
    """Result cast to dtype `dt` (copy=False); 0-d results become NumPy scalars."""
    a = a if a.dtype == dt else a.astype(dt)
    return a[()] if a.ndim == 0 else a


def _assert_stacked_2d(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")


def _assert_stacked_square(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
        m, n = a.shape[-2:]
        if m != n:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def _assert_finite(*arrays):
    for a in arrays:
        if not _np.isfinite(_core._to_numpy(a)).all():
            raise LinAlgError("Array must not contain infs or NaNs")


# ---------------------------------------------------------------- LAPACK-backed
@_native("solve")
def solve(a, b):
    """Solves a @ x = b (numpy.linalg.solve): a (..., M, M); b (M,) or (..., M, K), batch
    dimensions broadcast. LinAlgError "Singular matrix" for a singular a."""
    a, b = _arr(a), _arr(b)
    _assert_stacked_square(a)
    t, rt = _common_type(a, b)
    m = a.shape[-1]
    vec = b.ndim == 1
    bb = b.reshape(b.shape + (1,)) if vec else b
    if bb.ndim < 2 or bb.shape[-2] != m:
        raise _NotNative  # NumPy's gufunc message
    if a.ndim == 2 and bb.ndim == 2:  # one system: nothing to broadcast
        A, B = _as(a, t), _as(bb, t)
    else:
        try:
            batch = tuple(_np.broadcast_shapes(a.shape[:-2], bb.shape[:-2]))
        except ValueError:
            raise _NotNative from None
        A = _as(_core._linalg("broadcast_to", a, batch + a.shape[-2:]), t)
        B = _as(_core._linalg("broadcast_to", bb, batch + bb.shape[-2:]), t)
    x = _core._linalg("solve", A, B)
    if vec:
        x = x.reshape(x.shape[:-1])
    return _out(x, rt)


@_native("inv")
def inv(a):
    """Inverse of each matrix of a (..., M, M) stack (numpy.linalg.inv); LinAlgError
    "Singular matrix"."""
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    return _out(_core._linalg("inv", _as(a, t)), rt)


@_native("det")
def det(a):
    """Determinant of each matrix of a (..., M, M) stack (numpy.linalg.det), computed as
    NumPy does: sign * exp(log|det|) from the LU factorisation."""
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    r = _core._linalg("det", _as(a, t))
    _report_nan(r, "det")
    return _out(r, rt)


def _report_nan(r, where):
    """NumPy's det/slogdet loops compare NaN entries of the LU factors, which raises the
    invalid flag: "invalid value encountered in det" whenever a result is NaN."""
    if any(x.size and _np.isnan(_core._to_numpy(x)).any() for x in (r if isinstance(r, tuple) else (r,))):
        from .._errstate import report
        report(8, where)


@_native("slogdet")
def slogdet(a):
    """Sign and natural log of |det| of each matrix (numpy.linalg.slogdet): a
    SlogdetResult(sign, logabsdet); sign 0 and logabsdet -inf for singular matrices."""
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    s, l = _core._linalg("slogdet", _as(a, t))
    _report_nan((l, s), "slogdet")
    return SlogdetResult(_out(s, rt), _out(l, _real(rt)))


@_native("cholesky")
def cholesky(a, /, *, upper=False):
    """Cholesky factor L (or U with upper=True) of each Hermitian positive-definite matrix
    (numpy.linalg.cholesky); LinAlgError "Matrix is not positive definite"."""
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    return _out(_core._linalg("cholesky", _as(a, t), bool(upper)), rt)


def _uplo(UPLO):
    u = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u == "L"


@_native("eigh")
def eigh(a, UPLO="L"):
    """Eigenvalues (ascending, real) and eigenvectors (columns) of Hermitian/symmetric
    matrices (numpy.linalg.eigh): an EighResult."""
    lower = _uplo(UPLO)
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    w, v = _core._linalg("eigh", _as(a, t), lower, True)
    return EighResult(_out(w, _real(rt)), _out(v, rt))


@_native("eigvalsh")
def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending, real) of Hermitian/symmetric matrices (numpy.linalg.eigvalsh)."""
    lower = _uplo(UPLO)
    a = _arr(a)
    _assert_stacked_square(a)
    t, rt = _common_type(a)
    return _out(_core._linalg("eigh", _as(a, t), lower, False), _real(rt))


def _complex(dt):
    return _C64 if dt in (_F32, _C64) else _C128


@_native("eig")
def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (numpy.linalg.eig):
    an EigResult of complex dtype (complex64 for single-precision inputs)."""
    a = _arr(a)
    _assert_stacked_square(a)
    _assert_finite(a)
    t, rt = _common_type(a)
    w, v = _core._linalg("eig", _as(a, t), True)
    return EigResult(_out(w, _complex(rt)), _out(v, _complex(rt)))


@_native("eigvals")
def eigvals(a):
    """Eigenvalues of general square matrices (numpy.linalg.eigvals), complex dtype."""
    a = _arr(a)
    _assert_stacked_square(a)
    _assert_finite(a)
    t, rt = _common_type(a)
    return _out(_core._linalg("eig", _as(a, t), False), _complex(rt))


@_native("svd")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition a = U @ diag(S) @ Vh of each matrix (numpy.linalg.svd,
    LAPACK gesdd): an SVDResult, or S alone with compute_uv=False; S descending, real."""
    if hermitian:
        raise _NotNative
    a = _arr(a)
    _assert_stacked_2d(a)
    t, rt = _common_type(a)
    if compute_uv:
        u, s, vh = _core._linalg("svd", _as(a, t), bool(full_matrices), True)
        return SVDResult(_out(u, rt), _out(s, _real(rt)), _out(vh, rt))
    return _out(_core._linalg("svd", _as(a, t), False, False), _real(rt))


@_native("svdvals")
def svdvals(x, /):
    """Singular values of each matrix, descending (numpy.linalg.svdvals)."""
    return svd(x, compute_uv=False, hermitian=False)


@_native("qr")
def qr(a, mode="reduced"):
    """QR decomposition of each matrix (numpy.linalg.qr): QRResult(Q, R) for modes
    "reduced" and "complete", R alone for "r"."""
    if mode not in ("reduced", "complete", "r"):
        raise _NotNative  # "raw", the deprecated modes and invalid ones: NumPy
    a = _arr(a)
    _assert_stacked_2d(a)
    t, rt = _common_type(a)
    if mode == "r":
        return _out(_core._linalg("qr", _as(a, t), "r"), rt)
    q, r = _core._linalg("qr", _as(a, t), mode)
    return QRResult(_out(q, rt), _out(r, rt))


@_native("lstsq")
def lstsq(a, b, rcond=None):
    """Least-squares solution of a @ x = b (numpy.linalg.lstsq, LAPACK gelsd): returns
    (x, residuals, rank, s). rcond None means machine eps * max(M, N)."""
    a, b = _arr(a), _arr(b)
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise _NotNative
    vec = b.ndim == 1
    bb = b.reshape(b.shape + (1,)) if vec else b
    m, n = a.shape
    if bb.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    t, rt = _common_type(a, b)
    if rcond is None:
        rcond = _np.finfo(t).eps * max(n, m)
    x, resid, rank, s = _core._linalg("lstsq", _as(a, t), _as(bb, t), float(rcond))
    if vec:
        x = x.reshape((n,))  # residuals stay (1,) for a 1-D b, as NumPy's
    return _out(x, rt), _out(resid, _real(rt)), _np.int32(rank), _out(s, _real(rt))


# ---------------------------------------------------------------- products and composites
@_native("matrix_power")
def matrix_power(a, n):
    """a raised to the integer power n by repeated squaring (numpy.linalg.matrix_power);
    n < 0 inverts first; n == 0 gives identities of a's dtype."""
    a = _arr(a)
    _assert_stacked_square(a)
    try:
        n = _operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    mm = _products._mm
    if n == 0:
        r = _empty(a.shape, dtype=a.dtype)
        r[...] = _eye(a.shape[-2], dtype=a.dtype)
        return r
    if n < 0:
        a = inv(a)
        n = abs(n)
    if n == 1:
        return a._copy("C")
    if n == 2:
        return mm(a, a)
    if n == 3:
        return mm(mm(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else mm(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else mm(result, z)
    return result


def _chain_order(dims):
    """Optimal parenthesisation of a matrix chain (the classic dynamic programme)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


@_native("multi_dot")
def multi_dot(arrays, *, out=None):
    """Product of a chain of matrices in the cheapest order (numpy.linalg.multi_dot); the
    first may be 1-D (a row) and the last 1-D (a column); the others must be 2-D."""
    arrs = [_arr(x) for x in arrays]
    n = len(arrs)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return _products.dot(arrs[0], arrs[1], out=out)
    ndim_first, ndim_last = arrs[0].ndim, arrs[-1].ndim
    if ndim_first == 1:
        arrs[0] = arrs[0].reshape((1, -1))
    if ndim_last == 1:
        arrs[-1] = arrs[-1].reshape((-1, 1))
    _assert_stacked_2d(*arrs)
    for x in arrs:
        if x.ndim != 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be two-dimensional")
    mm = _products._mm
    if n == 3:
        a, b, c = arrs
        a0, a1b0 = a.shape
        b1c0, c1 = c.shape
        cost1 = a0 * b1c0 * (a1b0 + c1)
        cost2 = a1b0 * c1 * (a0 + b1c0)
        r = mm(mm(a, b), c) if cost1 < cost2 else mm(a, mm(b, c))
    else:
        dims = [x.shape[0] for x in arrs] + [arrs[-1].shape[1]]
        split = _chain_order(dims)

        def go(i, j):
            if i == j:
                return arrs[i]
            return mm(go(i, split[i][j]), go(split[i][j] + 1, j))
        r = go(0, n - 1)
    if ndim_first == 1 and ndim_last == 1:
        r = r.reshape(())
    elif ndim_first == 1:
        r = r.reshape(r.shape[1:])
    elif ndim_last == 1:
        r = r.reshape(r.shape[:-1])
    return _products._result(r, out)


@_native("outer")
def outer(x1, x2, /):
    """Outer product of two 1-D arrays (numpy.linalg.outer); ValueError otherwise."""
    a, b = _arr(x1), _arr(x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={a.ndim} and x2.ndim={b.ndim}.")
    return _core._linalg("outer", a, b)


@_native("cross")
def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along `axis` (numpy.linalg.cross)."""
    a, b = _arr(x1), _arr(x2)
    if a.ndim < 1 or b.ndim < 1 or a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{a.shape[axis] if a.ndim else 0} and {b.shape[axis] if b.ndim else 0} "
                         "dimensional instead.")
    return _products.cross(a, b, axis=axis)


@_native("matmul")
def matmul(x1, x2, /):
    """numpy.linalg.matmul: npc.matmul."""
    return _products.matmul(x1, x2)


@_native("tensordot")
def tensordot(x1, x2, /, *, axes=2):
    """numpy.linalg.tensordot: npc.tensordot."""
    return _products.tensordot(x1, x2, axes)


@_native("vecdot")
def vecdot(x1, x2, /, *, axis=-1):
    """numpy.linalg.vecdot: npc.vecdot."""
    return _products.vecdot(x1, x2, axis=axis)


@_native("matrix_transpose")
def matrix_transpose(x, /):
    """numpy.linalg.matrix_transpose: npc.matrix_transpose."""
    return _products.matrix_transpose(x)


@_native("tensorsolve")
def tensorsolve(a, b, axes=None):
    """Solves tensordot(a, x, b.ndim) = b for x (numpy.linalg.tensorsolve)."""
    a, b = _arr(a), _arr(b)
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = a.transpose(allaxes)
    oldshape = a.shape[-(an - b.ndim):]
    prod = 1
    for k in oldshape:
        prod *= k
    if a.size != prod ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    a = a.reshape(prod, prod)
    b = b.reshape(-1)
    res = solve(a, b)
    return res.reshape(oldshape)


@_native("tensorinv")
def tensorinv(a, ind=2):
    """Inverse of an N-d array for tensordot (numpy.linalg.tensorinv)."""
    a = _arr(a)
    oldshape = a.shape
    prod = 1
    if ind > 0:
        invshape = oldshape[ind:] + oldshape[:ind]
        for k in oldshape[ind:]:
            prod *= k
    else:
        raise ValueError("Invalid ind argument.")
    a = a.reshape(prod, -1)
    ia = inv(a)
    return ia.reshape(*invshape)


# ---------------------------------------------------------------- norms and spectral composites
# Note [linalg composites]
# norm, cond, pinv and matrix_rank decompose into npc primitives (ufuncs, reductions,
# products, svd) in the very order numpy.linalg computes them, so results agree with
# NumPy's to the last bit wherever the primitives do.
def _np_ns():
    import npc
    return npc


def _float_input(x):
    if x.dtype.kind not in "fc":
        return x.astype(_F64)
    return x


def _norm_axis(axis, nd):
    a = _operator.index(axis)
    if not -nd <= a < nd:
        raise _np.exceptions.AxisError(a, nd)
    return a % nd


def _svd_reduce(x, row_axis, col_axis, op, initial=None):
    n = _np_ns()
    y = n.moveaxis(x, (row_axis, col_axis), (-2, -1))
    s = svd(y, compute_uv=False)
    return op(s, axis=-1) if initial is None else op(s, axis=-1, initial=initial)


@_native("norm")
def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm (numpy.linalg.norm): every `ord` NumPy accepts (None, 'fro',
    'nuc', inf, -inf, 0, 1, -1, 2, -2, other p for vectors), `axis` None, an int or a pair,
    `keepdims`. Integer inputs are computed in float64."""
    n = _np_ns()
    x = _float_input(_arr(x))
    inf = _np.inf
    if axis is None:
        nd = x.ndim
        if ord is None or (isinstance(ord, str) and ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            v = x if nd == 1 else x.reshape(-1)
            # npc.dot (not _products.dot): its C++ fast path (Note [fast products] in
            # csrc/bind_linalg.cpp) takes the common case.
            if v.dtype.kind == "c":
                re, im = v.real, v.imag
                sq = n.dot(re, re) + n.dot(im, im)
            else:
                sq = n.dot(v, v)
            r = n.sqrt(sq)
            if keepdims:
                r = n.asarray(r).reshape((1,) * nd)
            return r
    nd = x.ndim
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = int(axis)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
        axis = (axis,)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"Invalid norm order '{ord}' for vectors")
        if ord == inf:
            return n.abs(x).max(axis=axis, keepdims=keepdims, initial=0)
        if ord == -inf:
            return n.abs(x).min(axis=axis, keepdims=keepdims)
        if ord == 0:
            return (x != 0).astype(x.real.dtype).sum(axis=axis, keepdims=keepdims)
        if ord == 1:
            return n.add.reduce(n.abs(x), axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            sq = (x.conj() * x).real
            return n.sqrt(n.add.reduce(sq, axis=axis, keepdims=keepdims))
        absx = n.abs(x)
        absx **= ord
        r = n.add.reduce(absx, axis=axis, keepdims=keepdims)
        # 1/ord rounded in r's dtype, passed as a Python float (weak: it stays in that dtype).
        r **= float(n.reciprocal(ord, dtype=r.dtype))
        return r
    if len(axis) == 2:
        row, col = (_norm_axis(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        if isinstance(ord, str) and ord not in ("fro", "f", "nuc"):
            raise ValueError("Invalid norm order for matrices.")
        if ord == 2:
            r = _svd_reduce(x, row, col, n.amax, 0)
        elif ord == -2:
            r = _svd_reduce(x, row, col, n.amin)
        elif ord == 1:
            c = col - 1 if col > row else col
            r = n.add.reduce(n.abs(x), axis=row).max(axis=c, initial=0)
        elif ord == inf:
            rr = row - 1 if row > col else row
            r = n.add.reduce(n.abs(x), axis=col).max(axis=rr, initial=0)
        elif ord == -1:
            c = col - 1 if col > row else col
            r = n.add.reduce(n.abs(x), axis=row).min(axis=c)
        elif ord == -inf:
            rr = row - 1 if row > col else row
            r = n.add.reduce(n.abs(x), axis=col).min(axis=rr)
        elif ord in (None, "fro", "f"):
            r = n.sqrt(n.add.reduce((x.conj() * x).real, axis=axis))
        elif ord == "nuc":
            r = _svd_reduce(x, row, col, n.sum, 0)
        else:
            raise ValueError("Invalid norm order for matrices.")
        if keepdims:
            shape = list(x.shape)
            shape[axis[0]] = 1
            shape[axis[1]] = 1
            r = n.asarray(r).reshape(shape)
        return r
    raise ValueError("Improper number of dimensions to norm.")


@_native("vector_norm")
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over `axis` (None: all elements; an int; a tuple: those axes taken as
    one vector) (numpy.linalg.vector_norm)."""
    n = _np_ns()
    x = _arr(x)
    shape = list(x.shape)
    if axis is None:
        x = x.reshape(-1)
        ax = 0
    elif isinstance(axis, tuple):
        norm_axes = tuple(_norm_axis(a, x.ndim) for a in axis)
        rest = tuple(i for i in range(x.ndim) if i not in norm_axes)
        size = 1
        for i in axis:
            size *= x.shape[i]
        x = x.transpose(list(axis + rest)).reshape((size, *[x.shape[i] for i in rest]))
        ax = 0
    else:
        ax = axis
    r = norm(x, axis=ax, ord=ord)
    if keepdims:
        axes = range(len(shape)) if axis is None else ((axis,) if not isinstance(axis, tuple) else axis)
        for i in axes:
            shape[_norm_axis(i, len(shape))] = 1
        r = n.asarray(r).reshape(tuple(shape))
    return r


@_native("matrix_norm")
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes (numpy.linalg.matrix_norm)."""
    return norm(_arr(x), axis=(-2, -1), keepdims=keepdims, ord=ord)


def _cond_svdvals(x):
    """Singular values of each matrix of x as a NumPy array, NaN for the matrices whose SVD
    fails (non-finite entries) instead of a LinAlgError: NumPy's cond reads its svd gufunc
    with errors ignored, which fills a failed matrix's outputs with NaN."""
    n = _np_ns()
    try:
        return n.asarray(svd(x, compute_uv=False))
    except LinAlgError:
        pass
    xs = x.reshape((-1,) + tuple(x.shape[-2:]))
    k = min(x.shape[-2:])
    rows = []
    for i in range(xs.shape[0]):
        try:
            rows.append(_np.asarray(_core._to_numpy(n.asarray(svd(xs[i], compute_uv=False)))))
        except LinAlgError:
            rows.append(_np.full(k, _np.nan, dtype=_np.dtype(_real(_common_type(x)[1]))))
    return n.asarray(_np.stack(rows).reshape(tuple(x.shape[:-2]) + (k,)))


@_native("cond")
def cond(x, p=None):
    """Condition number (numpy.linalg.cond): p None/2/-2 from singular values; other p as
    norm(x, p) * norm(inv(x), p). inf for singular matrices, as NumPy."""
    n = _np_ns()
    x = _arr(x)
    if x.ndim >= 2 and x.size == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    with _np.errstate(all="ignore"):
        if p is None or (not isinstance(p, str) and p in (2, -2)):
            _assert_stacked_2d(x)
            s = _cond_svdvals(x)
            r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
        else:
            _assert_stacked_square(x)
            t, rt = _common_type(x)
            try:
                ix = _core._linalg("inv", _as(x, t))
            except LinAlgError:
                raise _NotNative from None  # NumPy computes with inf/nan entries here
            if p == "nuc":
                r = n.sum(_cond_svdvals(x), axis=-1, initial=0) * n.sum(_cond_svdvals(ix), axis=-1, initial=0)
            else:
                r = norm(x, p, axis=(-2, -1)) * norm(ix, p, axis=(-2, -1))
            r = n.asarray(r).astype(_real(rt))
    r = n.asarray(r)
    nan_mask = n.isnan(r)
    if nan_mask.any():
        nan_mask &= ~n.isnan(x).any(axis=(-2, -1))
        if r.ndim > 0:
            r[nan_mask] = _np.inf
        elif nan_mask:
            r = r.dtype.type(_np.inf)
    return r[()] if r.ndim == 0 else r


@_native("matrix_rank")
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above the tolerance (numpy.linalg.matrix_rank)."""
    n = _np_ns()
    if hermitian:
        raise _NotNative
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    A = _arr(A)
    if A.ndim < 2:
        return int(not n.all(A == 0))
    S = n.asarray(svd(A, compute_uv=False))
    if tol is None:
        rt = float(max(A.shape[-2:]) * _np.finfo(S.dtype).eps) if rtol is None else n.asarray(rtol)[..., None]
        tol = S.max(axis=-1, keepdims=True, initial=0) * rt
    else:
        tol = n.asarray(tol)[..., None]
    return n.count_nonzero(S > tol, axis=-1)


_NoValue = _np._NoValue


@_native("pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=_NoValue):
    """Moore-Penrose pseudo-inverse from the SVD (numpy.linalg.pinv): singular values
    below rcond * max(s) are dropped."""
    n = _np_ns()
    if hermitian:
        raise _NotNative
    a = _arr(a)
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * _np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = n.asarray(rcond)
    if a.ndim >= 2 and a.size == 0:
        m, k = a.shape[-2:]
        return n.empty(a.shape[:-2] + (k, m), dtype=a.dtype)
    a = a.conjugate()
    u, s, vt = svd(a, full_matrices=False)
    s = n.asarray(s)
    cutoff = rcond[..., None] * n.amax(s, axis=-1, keepdims=True)
    large = s > cutoff
    s = n.divide(1, s, where=large, out=s)
    s[~large] = 0
    mt = _products.matrix_transpose
    return n.matmul(mt(vt), n.multiply(s[..., None], mt(u)))


@_native("trace")
def trace(x, /, *, offset=0, dtype=None):
    """Sum along the diagonals of the last two axes (numpy.linalg.trace)."""
    return _np_ns().trace(_arr(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@_native("diagonal")
def diagonal(x, /, *, offset=0):
    """Diagonals of the last two axes (numpy.linalg.diagonal): a view."""
    return _np_ns().diagonal(_arr(x), offset=offset, axis1=-2, axis2=-1)


__getattr__, __dir__ = _install(globals())
