"""Matrix and tensor products against NumPy: matmul/@, dot, vdot, inner, outer, tensordot,
einsum, kron, matrix_transpose, vecdot, matvec, vecmat.

Two kinds of inputs:
- small integers (exact in every dtype and every summation order), compared bit for bit
  for every dtype pair and shape kind;
- random floats, compared with the forward error bound of a dot product of length k,
  |r - e| <= FACTOR * k * eps * (|a| @ |b|) (BLAS and NumPy sum in different orders).
"""
import itertools

import numpy as np
import pytest

import npc
from dtypes import NATIVE, assert_same

# einsum paths npc does not run natively yet (optimize=True outer products, error
# reporting) run on NumPy.
pytestmark = pytest.mark.allow_fallback

# Tolerances (data, fixed before testing): multiples of k * eps of the result dtype.
DOT_BOUND_FACTOR = {np.dtype("float32"): 2.0, np.dtype("float64"): 2.0,
                    np.dtype("complex64"): 4.0, np.dtype("complex128"): 4.0}


def small(shape, dtype, seed=0):
    """Small integer values (0..3, or -2..2 for signed kinds) of `dtype`."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    lo = 0 if dt.kind == "u" else -2
    x = rng.integers(lo, 3, shape)
    if dt.kind == "c":
        x = x + 1j * rng.integers(lo, 3, shape)
    return x.astype(dt)


def randf(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def assert_dot_close(actual, expected, a, b, k):
    a_np = np.asarray(actual)
    assert a_np.dtype == expected.dtype and a_np.shape == expected.shape, (a_np.dtype, expected.dtype,
                                                                          a_np.shape, expected.shape)
    eps = np.finfo(expected.dtype).eps
    bound = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    tol = DOT_BOUND_FACTOR[expected.dtype] * max(k, 1) * eps * bound
    assert np.all(np.abs(a_np.astype(np.complex128) - expected.astype(np.complex128)) <= tol + 1e-300)


@pytest.mark.parametrize("da,db", list(itertools.product(NATIVE, NATIVE)),
                         ids=lambda d: d.name)
def test_matmul_every_dtype_pair(da, db):
    a = small((3, 4), da, 1)
    b = small((4, 2), db, 2)
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(b)), np.matmul(a, b))


SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((1, 3), (3, 1)), ((3,), (2, 3, 4)),
    ((2, 3, 4), (4,)), ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((3, 0), (0,)), ((0,), (0,)),
    ((0, 2, 3), (3, 4)), ((2, 3), (3, 0)), ((4, 1, 3), (1, 3, 2)),
]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
def test_matmul_shapes(sa, sb, dtype):
    a = small(sa, dtype, 3)
    b = small(sb, dtype, 4)
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(b)), np.matmul(a, b))


def _views(x):
    """(name, numpy view, npc view) of one base array: contiguous, transposed, strided,
    reversed."""
    X = npc.asarray(x)
    yield "contig", x, X
    yield "T", x.T, X.T
    yield "step", x[::2], X[::2]
    yield "neg", x[::-1, ::-1], X[::-1, ::-1]


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "complex128", "bool"])
def test_matmul_noncontiguous(dtype):
    base_a = small((6, 6), dtype, 5)
    base_b = small((6, 6), dtype, 6)
    for (na, a, A), (nb, b, B) in itertools.product(list(_views(base_a)), list(_views(base_b))):
        if a.shape[-1] != b.shape[0]:
            continue
        assert_same(npc.matmul(A, B), np.matmul(a, b))
        assert_same(A @ B, a @ b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("n,k,m", [(1, 1, 1), (7, 13, 5), (64, 33, 65), (3, 200, 2)])
def test_matmul_blas_accuracy(dtype, n, k, m):
    a = randf((2, n, k), dtype, 7)
    b = randf((k, m), dtype, 8)
    assert_dot_close(npc.matmul(npc.asarray(a), npc.asarray(b)), np.matmul(a, b), a, b, k)


def test_matmul_special_values():
    a = np.array([[np.inf, 1.0], [np.nan, 0.0]])
    b = np.array([[1.0, 0.0], [2.0, -np.inf]])
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(b)), np.matmul(a, b))


def test_matmul_integer_wraparound():
    a = np.full((2, 3), 100, np.int8)
    b = np.full((3, 2), 100, np.int8)
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(b)), np.matmul(a, b))
    a = np.full((2, 3), 2**62, np.int64)
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(a.T)), np.matmul(a, a.T))


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), ()), ((2, 3), (4, 2)), ((3,), (4,)),
                                   ((2, 2, 3), (3, 3, 2))])
def test_matmul_errors(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    with pytest.raises(ValueError) as e_np:
        np.matmul(a, b)
    with pytest.raises(ValueError) as e_npc:
        npc.matmul(npc.asarray(a), npc.asarray(b))
    assert str(e_npc.value) == str(e_np.value)


def test_matmul_out_and_dtype():
    a, b = small((3, 4), "float64"), small((4, 2), "float64", 1)
    out = npc.empty((3, 2))
    r = npc.matmul(npc.asarray(a), npc.asarray(b), out=out)
    assert r is out
    assert_same(out, np.matmul(a, b))
    assert_same(npc.matmul(npc.asarray(a), npc.asarray(b), dtype=np.float32), np.matmul(a, b, dtype=np.float32))


def test_matmul_operators():
    a, b = small((3, 3), "float64"), small((3, 3), "float64", 1)
    A, B = npc.asarray(a), npc.asarray(b)
    assert type(A @ B) is npc.ndarray
    assert_same(A @ b, a @ b)
    assert_same(a @ B, a @ b)
    assert_same([[1, 2, 3]] @ A, [[1, 2, 3]] @ a)
    C = A.copy()
    C @= B
    c = a.copy()
    c @= b
    assert_same(C, c)
    assert type(npc.asarray([1.0, 2.0]) @ npc.asarray([3.0, 4.0])) is np.float64


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((2, 3), (3,)), ((2, 3, 4), (4,)),
                                   ((2, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4)), ((0, 3), (3, 0)), ((2, 3), ()),
                                   ((), ())])
@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128", "bool"])
def test_dot(sa, sb, dtype):
    a, b = small(sa, dtype, 1), small(sb, dtype, 2)
    assert_same(npc.dot(npc.asarray(a), npc.asarray(b)), np.dot(a, b))


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex64", "complex128"])
def test_vdot_inner_outer(dtype):
    a, b = small((2, 3), dtype, 1), small((2, 3), dtype, 2)
    A, B = npc.asarray(a), npc.asarray(b)
    assert_same(npc.vdot(A, B), np.vdot(a, b))
    assert_same(npc.inner(A, B), np.inner(a, b))
    assert_same(npc.inner(A[0], B[1]), np.inner(a[0], b[1]))
    assert_same(npc.outer(A, B), np.outer(a, b))
    assert_same(npc.outer(A[0], B[:, 0]), np.outer(a[0], b[:, 0]))


@pytest.mark.parametrize("axes", [0, 1, 2, ([1, 0], [0, 1]), ([2], [0]), (1, 0), ([], [])])
def test_tensordot(axes):
    a, b = small((3, 2, 4), "float64", 1), small((2, 3, 4), "float64", 2)
    if axes in (1, 2):
        b = small((4, 2, 3) if axes == 1 else (2, 4, 3), "float64", 2)
    if axes == ([2], [0]):
        b = small((4, 3), "float64", 2)
    if axes == (1, 0):
        b = small((2, 5), "float64", 2)
    assert_same(npc.tensordot(npc.asarray(a), npc.asarray(b), axes), np.tensordot(a, b, axes))


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 2, 2), (3,)), ((0, 2), (2, 3)),
                                   ((2,), (3,))])
@pytest.mark.parametrize("dtype", ["int64", "float32", "complex128", "bool"])
def test_kron(sa, sb, dtype):
    a, b = small(sa, dtype, 1), small(sb, dtype, 2)
    assert_same(npc.kron(npc.asarray(a), npc.asarray(b)), np.kron(a, b))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,kj->ik", [(2, 3), (4, 3)]), ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij,jk->ik", [(2, 0), (0, 4)]), ("ik,k->i", [(2, 1), (5,)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]), ("iij->j", [(3, 3, 2)]), ("ij,jj->i", [(2, 3), (3, 3)]),
    ("iji->j", [(3, 2, 3)]), ("ii,ij->j", [(3, 3), (3, 2)]),
]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
@pytest.mark.parametrize("sub,shapes", EINSUM, ids=[e[0] for e in EINSUM])
@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128"])
def test_einsum(sub, shapes, optimize, dtype):
    ops = [small(s, dtype, i) for i, s in enumerate(shapes)]
    got = npc.einsum(sub, *[npc.asarray(o) for o in ops], optimize=optimize)
    assert_same(got, np.einsum(sub, *ops, optimize=optimize))


def test_einsum_errors():
    with pytest.raises(ValueError):
        npc.einsum("ij,jk->ik", npc.ones((2, 3)), npc.ones((4, 4)))


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128"])
def test_matrix_transpose_vecdot_matvec_vecmat(dtype):
    a, v, w = small((2, 3, 4), dtype, 1), small((4,), dtype, 2), small((2, 3), dtype, 3)
    A, V, W = npc.asarray(a), npc.asarray(v), npc.asarray(w)
    assert_same(npc.matrix_transpose(A), np.matrix_transpose(a))
    assert_same(npc.vecdot(A, V), np.vecdot(a, v))
    assert_same(npc.vecdot(A, A, axis=1), np.vecdot(a, a, axis=1))
    assert_same(npc.matvec(A, V), np.matvec(a, v))
    assert_same(npc.vecmat(W, A), np.vecmat(w, a))
    with pytest.raises(ValueError):
        npc.matrix_transpose(V)


def test_products_are_native():
    npc.reset_fallback_stats()
    a = npc.asarray(small((3, 3), "float64"))
    for f in (lambda: a @ a, lambda: npc.dot(a, a), lambda: npc.einsum("ii,ij->j", a, a), lambda: npc.inner(a, a), lambda: npc.outer(a, a),
              lambda: npc.tensordot(a, a), lambda: npc.kron(a, a), lambda: npc.einsum("ij,jk", a, a),
              lambda: npc.vdot(a, a), lambda: npc.vecdot(a, a), lambda: npc.matvec(a, a[0])):
        f()
    assert npc.fallback_stats() == {}


@pytest.mark.parametrize("sa,sb,kw", [((3,), (3,), {}), ((4, 3), (3,), {}), ((2, 1, 3), (5, 3), {}),
                                      ((3, 4), (4, 3), {"axisa": 0}), ((3, 4), (3, 4), {"axis": 0}),
                                      ((4, 3), (4, 3), {"axisc": 0}), ((0, 3), (3,), {})], ids=str)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float16", "float64", "complex64"])
def test_cross(sa, sb, kw, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(sa) * 4).astype(dtype)
    b = (rng.standard_normal(sb) * 4).astype(dtype)
    assert_same(npc.cross(npc.asarray(a), npc.asarray(b), **kw), np.cross(a, b, **kw))
    if not kw:
        assert_same(npc.linalg.cross(npc.asarray(a), npc.asarray(b)), np.linalg.cross(a, b))


def test_cross_errors():
    for a, b in ((np.ones(2), np.ones(3)), (np.ones((3, 2)), np.ones((3, 2)))):
        with pytest.raises(ValueError) as e_np:
            np.cross(a, b)
        with pytest.raises(ValueError) as e_npc:
            npc.cross(npc.asarray(a), npc.asarray(b))
        assert str(e_npc.value) == str(e_np.value)


@pytest.mark.parametrize("sa, sb, out", [
    ((2, 3), (3,), lambda m: m.zeros(2, m.float32)), ((2, 3), (3,), lambda m: m.zeros(3)),
    ((2, 3), (3,), lambda m: m.zeros((2, 1))), ((2, 3), (3,), lambda m: m.zeros(4)[::2]),
    ((2, 3), (3,), lambda m: m.zeros(2)), ((2, 3), (3, 2), lambda m: m.zeros((2, 2), m.float32)),
    ((2, 3), (3, 2), lambda m: m.zeros((2, 2)).T), ((2, 3), (3, 2), lambda m: m.zeros((2, 2))),
    ((2, 3), (3, 2), lambda m: m.zeros((2, 2), m.complex128)), ((3,), (3,), lambda m: m.zeros(())),
    ((3,), (3,), lambda m: m.zeros((), m.float32))], ids=lambda v: str(v) if isinstance(v, tuple) else "out")
def test_dot_out_must_match_exactly(sa, sb, out):
    """numpy.dot's out= takes no cast: exactly the result dtype, ndim and shape, C order."""
    a, b = small(sa, "float64"), small(sb, "float64", 1)
    o_np, o_npc = out(np), out(npc)
    try:
        want = np.dot(a, b, out=o_np)
    except ValueError as e_np:
        with pytest.raises(ValueError) as e_npc:
            npc.dot(npc.asarray(a), npc.asarray(b), out=o_npc)
        assert str(e_npc.value) == str(e_np)
        return
    got = npc.dot(npc.asarray(a), npc.asarray(b), out=o_npc)
    assert got is o_npc
    assert_same(got, want)


@pytest.mark.parametrize("sub", ["ii->i", "ij", "ji", "ij->ji", "iij->ji", "...ii->...i"])
@pytest.mark.parametrize("writeable", [True, False])
def test_einsum_single_operand_views(sub, writeable):
    """One operand and nothing summed: NumPy returns a new view of the input (writeable when
    the input is, the diagonal of "ii" included); writes through it show in the input."""
    shape = (3, 3, 3) if sub.startswith(("iij", "...")) else (3, 3)
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    b = npc.asarray(a.copy())
    a.flags.writeable = b.flags.writeable = writeable
    e, g = np.einsum(sub, a), npc.einsum(sub, b)
    assert g is not b and e is not a
    assert_same(g, e)
    assert npc.shares_memory(g, b) == np.shares_memory(e, a)
    assert g.flags.writeable == e.flags.writeable
    if e.flags.writeable:
        e[...] = -1
        g[...] = -1
        assert_same(b, a)


_FP_CASES = {
    "norm_overflow": lambda m: m.linalg.norm(m.array([1e200, 1e200])),
    "norm_f32_overflow": lambda m: m.linalg.norm(m.array([1e30, 1e30], m.float32)),
    "dot_f16_overflow": lambda m: m.dot(m.full((2, 2), 300.0, m.float16), m.full((2, 2), 300.0, m.float16)),
    "dot_f16_vec": lambda m: m.dot(m.full(2, 300.0, m.float16), m.full(2, 300.0, m.float16)),
    "matmul_f16_overflow": lambda m: m.matmul(m.full((2, 2), 300.0, m.float16), m.full((2, 2), 300.0, m.float16)),
    "matmul_f64_overflow": lambda m: m.full((3, 3), 1e200) @ m.full((3, 3), 1e200),
    "matmul_inf_times_zero": lambda m: m.matmul(m.array([[m.inf, 0.0]]), m.array([[0.0], [1.0]])),
    "dot_inf_times_zero": lambda m: m.dot(m.array([[m.inf, 0.0]]), m.array([[0.0], [1.0]])),
    "matmul_inf_finite": lambda m: m.matmul(m.array([[m.inf, 1.0]]), m.array([[2.0], [1.0]])),
    "matmul_nan_input": lambda m: m.matmul(m.array([[m.nan, 1.0]]), m.array([[2.0], [1.0]])),
    "matmul_finite": lambda m: m.matmul(m.ones((2, 2)), m.ones((2, 2))),
    "matmul_int": lambda m: m.matmul(m.full((2, 2), 2**62), m.full((2, 2), 4)),
}


@pytest.mark.parametrize("case", list(_FP_CASES))
@pytest.mark.parametrize("mode", ["warn", "raise", "ignore"])
def test_product_floating_point_errors(case, mode):
    """Products report overflow and invalid values as NumPy does, under numpy.errstate."""
    import warnings

    def run(m):
        with warnings.catch_warnings(record=True) as w, np.errstate(all=mode):
            warnings.simplefilter("always")
            try:
                r = _FP_CASES[case](m)
            except FloatingPointError as e:
                return None, str(e), []
        return r, None, [(x.category, str(x.message)) for x in w]

    r_np, e_np, w_np = run(np)
    r_npc, e_npc, w_npc = run(npc)
    assert e_npc == e_np
    assert w_npc == w_np
    if e_np is None:
        assert_same(r_npc, r_np)


# Matrix-vector and vector-vector products run BLAS gemv/dot (Note [matrix-vector products]
# in src/ops/matmul.cpp): every operand layout, both sides, batches, against NumPy.
def _mv_layouts(rows, cols, dtype, seed):
    base = randf((rows, cols), dtype, seed)
    return {
        "C": base,
        "F": np.asfortranarray(base),
        "T": np.ascontiguousarray(base.T).T,
        "rowstep": randf((rows, 2 * cols), dtype, seed)[:, ::2],
        "colstep": randf((2 * rows, cols), dtype, seed)[::2],
        "neg": randf((rows, cols), dtype, seed)[::-1, ::-1],
    }


def _vec_layouts(k, dtype, seed):
    v = randf(3 * k, dtype, seed)
    return {"contig": v[:k], "step": v[::3], "neg": v[::-3], "bcast": np.broadcast_to(v[:1], (k,))}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("side", ["matvec", "vecmat", "dot"])
def test_matrix_vector_layouts(dtype, side):
    n, k = 37, 53
    for mname, A in _mv_layouts(n, k, dtype, 1).items():
        for vname, v in _vec_layouts(k if side != "vecmat" else n, dtype, 2).items():
            if side == "matvec":
                a, b = A, v
            elif side == "vecmat":
                a, b = v, A
            else:
                a, b = v, _vec_layouts(k, dtype, 3)["step"]
            exp = np.matmul(a, b)
            got = npc.matmul(npc.asarray(a), npc.asarray(b))
            assert_dot_close(got, exp, a, b, k if side != "vecmat" else n)
            # The (n,1) and (1,k) 2-D forms take the same BLAS paths.
            a2 = a[None] if a.ndim == 1 else a
            b2 = b[:, None] if b.ndim == 1 else b
            assert_dot_close(npc.asarray(a2) @ npc.asarray(b2), a2 @ b2, a2, b2, a2.shape[-1])


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_batched_matrix_vector(dtype):
    A = randf((4, 1, 6, 5), dtype, 0)
    x = randf((3, 5, 1), dtype, 1)
    y = randf((3, 1, 6), dtype, 2)
    assert_dot_close(npc.asarray(A) @ npc.asarray(x), A @ x, A, x, 5)
    assert_dot_close(npc.asarray(y) @ npc.asarray(A), y @ A, y, A, 6)
    v5, v6 = x[0, :, 0], y[0, 0]
    assert_dot_close(npc.asarray(A) @ npc.asarray(v5), A @ v5, A, v5, 5)
    assert_dot_close(npc.asarray(v6) @ npc.asarray(A), v6 @ A, v6, A, 6)
