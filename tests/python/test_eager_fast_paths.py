"""The eager fast paths of real-program patterns give NumPy's results, types and warnings:
NumPy-scalar operands and values (read in C++), element access with tuples of ints, basic
views and their assignment, small in-place operators, small products (`@`, dot, matmul),
multiversioned comparison and complex loops, small solves."""
import warnings

import numpy as np
import pytest

import npc


def assert_same(got, exp):
    """Equal values, and the same type (NumPy scalar or array) and dtype."""
    if isinstance(exp, np.ndarray):
        assert isinstance(got, npc.ndarray), type(got)
        got = np.asarray(got)
        assert got.shape == exp.shape
    else:
        assert type(got) is type(exp), (type(got), type(exp))
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    np.testing.assert_array_equal(got, exp)


def pair(x):
    return npc.array(x), x.copy()


SCALARS = [np.float64(1.5), np.float32(2.5), np.int32(3), np.int64(-4), np.uint8(7), np.complex128(1 + 2j),
           np.complex64(2 - 1j), np.float16(0.5), np.bool_(True)]


@pytest.mark.parametrize("s", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "complex64"])
def test_numpy_scalar_operands(s, dtype):
    a, e = pair(np.arange(1, 7, dtype=dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in (np.add, np.multiply, np.subtract, np.true_divide, np.less, np.equal):
            assert_same(op(a, s), op(e, s))
            assert_same(op(s, a), op(s, e))
        assert_same(a * s, e * s)
        assert_same(s * a, s * e)
        assert_same(a[::2] + s, e[::2] + s)  # a strided 1-D operand
        assert_same(np.sqrt(s), np.sqrt(s))
        assert_same(npc.sqrt(s), np.sqrt(s))


def test_python_scalars_only():
    for args in [(1, 2), (1, 2.5), (1j, 2.0), (3.0, 2)]:
        assert_same(npc.add(*args), np.add(*args))
        assert_same(npc.multiply(*args), np.multiply(*args))
    assert_same(npc.exp(1j * 0.3), np.exp(1j * 0.3))
    assert_same(npc.sqrt(2.0), np.sqrt(2.0))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = npc.sqrt(-1.0)
    assert np.isnan(r) and type(r) is np.float64
    assert [str(x.message) for x in w] == ["invalid value encountered in sqrt"]
    with pytest.raises(FloatingPointError), np.errstate(divide="raise"):
        npc.divide(np.float64(1.0), 0.0)


def test_element_get_set():
    a, e = pair(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    for key in [(1, 2, 3), (-1, -3, 0), (0, 0, -1)]:
        assert_same(a[key], e[key])
    for v in [np.float64(1.25), np.float32(2.5), 3, 4.5, np.int8(-2), np.bool_(True)]:
        a[1, 2, 3] = v
        e[1, 2, 3] = v
        assert_same(a, e)
    with pytest.warns(np.exceptions.ComplexWarning):
        a[0, 1, 2] = np.complex128(3 + 1j)
    e[0, 1, 2] = 3.0
    assert_same(a, e)
    with pytest.raises(IndexError):
        a[2, 0, 0]
    with pytest.raises(IndexError):
        a[0, 0, 4] = 1.0
    i, ei = pair(np.zeros((2, 2), np.int8))
    with pytest.raises(OverflowError):
        i[0, 1] = 300
    i[0, 1] = np.float64(7.9)  # int() of a NumPy float
    ei[0, 1] = np.float64(7.9)
    assert_same(i, ei)
    b, eb = pair(np.zeros((2, 2), bool))
    b[1, 1] = np.float64(2.0)
    eb[1, 1] = np.float64(2.0)
    assert_same(b, eb)
    r, er = pair(np.ones((2, 2)))
    r.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        r[0, 0] = np.float64(1.0)


def test_element_updates_in_loops():
    """A[i, j] -= np.dot(...) and friends: the textbook Cholesky of the real-programs suite."""
    rng = np.random.default_rng(0)
    B = rng.random((12, 12))
    M = B @ B.T + 12 * np.eye(12)
    res = []
    for lib in (np, npc):
        A = lib.asarray(M.copy())
        for i in range(12):
            for j in range(i):
                A[i, j] -= lib.dot(A[i, :j], A[j, :j])
                A[i, j] /= A[j, j]
            A[i, i] -= A[i, :i] @ A[i, :i]
            A[i, i] = lib.sqrt(A[i, i])
        res.append(np.asarray(A))
    np.testing.assert_array_equal(res[1], res[0])


def test_basic_views():
    a, e = pair(np.arange(30.0).reshape(5, 6))
    for key in [1, (1,), (slice(1, 4), 2), (2, slice(None, None, -2)), (slice(1, -1), slice(1, -1)),
                (slice(None), -1), (slice(10, 20), 0), (-1, slice(None))]:
        v = a[key]
        assert_same(v, e[key])
        assert v.base is a
        assert v.flags.c_contiguous == e[key].flags.c_contiguous
    v = a[1:3, 2]
    v[0] = -1.0
    assert a[1, 2] == -1.0
    b = npc.broadcast_to(npc.arange(3.0), (2, 3))
    assert not b[0, :].flags.writeable


def test_basic_view_assignment():
    a, e = pair(np.arange(30.0).reshape(5, 6))
    for key, v in [((slice(1, -1), 2), np.arange(3.0)), ((0, slice(1, -1)), 1.0), ((slice(None), -1), np.float32(2.5)),
                   ((slice(1, 3),), np.arange(6.0)), ((2, slice(None, None, -1)), np.arange(6) * 2),
                   ((slice(None), 0), 7), ((1, slice(0, 3)), np.ones((1, 3)))]:
        a[key] = npc.asarray(v) if isinstance(v, np.ndarray) else v
        e[key] = v
        assert_same(a, e)
    a[1:, 0] = a[:-1, 0]  # overlapping source
    e[1:, 0] = e[:-1, 0]
    assert_same(a, e)
    with pytest.raises(ValueError):
        a[1:3, 2] = npc.arange(5.0)
    i, _ = pair(np.zeros((3, 3), np.uint8))
    with pytest.raises(OverflowError):
        i[0, :] = -1
    with pytest.warns(np.exceptions.ComplexWarning):
        a[0, :] = npc.ones(6, dtype=complex)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_small_inplace(dtype):
    a, e = pair(np.arange(1, 13, dtype=dtype).reshape(3, 4))
    for b in [2, 0.5, np.dtype(dtype).type(3)]:
        a[:, 1] -= a[:, 2] * b
        e[:, 1] -= e[:, 2] * b
        a[1] /= b
        e[1] /= b
        a += a
        e += e
        assert_same(a, e)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            a[0] /= 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a[0] /= 0.0
    assert any("divide by zero" in str(x.message) for x in w)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
def test_small_products(dtype):
    rng = np.random.default_rng(1)
    M = (rng.random((7, 9)) * 4).astype(dtype)
    a, e = pair(M)
    for f in (lambda x, y: x @ y, lambda x, y: npc.dot(x, y) if isinstance(x, npc.ndarray) else np.dot(x, y),
              lambda x, y: npc.matmul(x, y) if isinstance(x, npc.ndarray) else np.matmul(x, y)):
        assert_same(f(a[2, :5], a[3, :5]), f(e[2, :5], e[3, :5]))        # 1-D @ 1-D: a NumPy scalar
        assert_same(f(a[1, :7], a[:7, 4]), f(e[1, :7], e[:7, 4]))        # row @ strided column
        # Matrix products: the same BLAS routine as NumPy's (gemv, gemm), whose bits may
        # differ between OpenBLAS builds and copies of strided operands (NumPy's dot copies
        # a strided vector, its matmul does not): values within BLAS rounding.
        for ga, ea in [(f(a[:, :7], a[:, 3]), f(e[:, :7], e[:, 3])), (f(a[1], a.T), f(e[1], e.T)),
                       (f(a[:4, :4], a[:4, 2:6]), f(e[:4, :4], e[:4, 2:6]))]:
            assert isinstance(ga, npc.ndarray) and ga.dtype == ea.dtype and ga.shape == ea.shape
            np.testing.assert_allclose(np.asarray(ga), ea, rtol=1e-6 if dtype == "float32" else 1e-14)
    with pytest.raises(ValueError):
        a[0] @ a[0, :4]


def test_product_fp_warnings():
    big = npc.asarray([1e308, 1e308])
    with pytest.warns(RuntimeWarning, match="overflow encountered in dot"):
        r = npc.dot(big, big)
    assert r == np.inf and type(r) is np.float64
    with pytest.warns(RuntimeWarning, match="overflow encountered in matmul"):
        big @ big


def test_matmul_operator_subclasses():
    class Sub(npc.ndarray):
        def __rmatmul__(self, other):
            return "sub-rmatmul"

    a = npc.ones((2, 2))
    s = npc.ones((2, 2)).view(Sub)
    assert a @ s == "sub-rmatmul"
    assert isinstance(s @ a, npc.ndarray)
    assert_same(npc.ones((2, 2), dtype=np.int64) @ npc.ones(2, dtype=np.int64), np.ones((2, 2), np.int64) @ np.ones(2, np.int64))
    with pytest.raises(TypeError):
        a @ "x"


def test_comparison_and_complex_loops():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(1001)
    x[::7] = np.nan
    a, e = pair(x)
    for op in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal):
        assert_same(op(a, 0.1), op(e, 0.1))
        assert_same(op(0.1, a), op(0.1, e))
        assert_same(op(a, a[::-1].copy()), op(e, e[::-1].copy()))
        assert_same(op(a.astype(np.float32), np.float32(0.1)), op(e.astype(np.float32), np.float32(0.1)))
    z = (rng.standard_normal(1001) + 1j * rng.standard_normal(1001)) * 1e150
    za, ze = pair(z)
    assert_same(za * za, ze * ze)
    assert_same(np.abs(za), np.abs(ze))
    assert_same(za * (2 + 1j), ze * (2 + 1j))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(np.cumprod(za[:20]), np.cumprod(ze[:20]))  # overlapping operands: the in-order loop


def test_small_solve_matches_numpy():
    rng = np.random.default_rng(3)
    for n in (8, 150, 250):
        A = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)) + n * np.eye(n)
        V = rng.standard_normal((n, 4)) + 0j
        np.testing.assert_allclose(np.asarray(npc.linalg.solve(npc.asarray(A), npc.asarray(V))),
                                   np.linalg.solve(A, V), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(npc.linalg.inv(npc.asarray(A))), np.linalg.inv(A), rtol=1e-12, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        npc.linalg.solve(npc.zeros((3, 3)), npc.ones(3))


@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 0.97, 1.0])
def test_mask_selection(density):
    rng = np.random.default_rng(4)
    for n in (1, 7, 8, 9, 1003):
        x = rng.random(n)
        m = rng.random(n) < density
        for dtype in ("float64", "int8", "complex128"):
            assert_same(npc.array(x.astype(dtype))[npc.array(m)], x.astype(dtype)[m])
    img = rng.random((70, 70))
    m = img < density
    assert_same(npc.array(img)[npc.array(m)], img[m])


def test_gather_indices():
    rng = np.random.default_rng(5)
    x = rng.random(50)
    idx = rng.integers(-50, 50, 300)
    assert_same(npc.array(x)[npc.array(idx)], x[idx])
    bad = idx.copy()
    bad[7], bad[9] = 50, -51
    with pytest.raises(IndexError, match="index 50 is out of bounds for axis 0 with size 50"):
        npc.array(x)[npc.array(bad)]


def test_mask_selection_raw_bool_bytes():
    """Any nonzero byte of a bool mask selects (a bool view of other bytes)."""
    raw = np.array([0, 2, 255, 0, 1, 0, 0, 128, 3, 0, 7], np.uint8)
    x = np.arange(11.0)
    assert_same(npc.array(x)[npc.array(raw).view(bool)], x[raw.view(bool)])


@pytest.mark.parametrize("key", [(slice(None), 2), (1, slice(1, None)), (slice(1, -1), slice(None, None, 2)),
                                 (slice(None, None, -1), 0)], ids=str)
def test_augmented_assignment_and_self_views(key):
    """`a[key] op= b` stores the updated view back into itself (a no-op store); views that
    overlap without being the same still copy as NumPy does."""
    e = np.arange(30.0).reshape(5, 6)
    a = npc.array(e)
    a[key] -= a[key] * np.float64(0.5)
    e[key] -= e[key] * np.float64(0.5)
    assert_same(a, e)
    a[key] = a[key]
    e[key] = e[key]
    assert_same(a, e)
    a[1:, 0] = a[:-1, 0]
    e[1:, 0] = e[:-1, 0]
    a[0, 1:] = a[0, :-1]
    e[0, 1:] = e[0, :-1]
    assert_same(a, e)


@pytest.mark.parametrize("name", ["matmul", "vecdot", "matvec", "vecmat"])
def test_products_named_like_numpy_ufuncs(name):
    """npc.matmul and the other products that NumPy defines as ufuncs take the guarded fast
    call like npc.dot (Note [fast products]): plain arrays give NumPy's values, and instances
    of numpy.ndarray subclasses run on NumPy (Note [NumPy subclasses])."""
    rng = np.random.default_rng(0)
    m, v = rng.random((4, 4)), rng.random(4)
    args = {"matmul": (m, v), "vecdot": (v, v), "matvec": (m, v), "vecmat": (v, m)}[name]
    f, g = getattr(npc, name), getattr(np, name)
    assert type(f) is type(npc.dot)
    exp = g(*args)
    got = f(*[npc.array(x) for x in args])
    np.testing.assert_allclose(np.asarray(got), exp, rtol=1e-15)
    masked = [np.ma.array(x) for x in args]
    r = f(*masked)
    assert type(r) is type(g(*masked))


# CPython's slot ids (Include/typeslots.h, part of the stable ABI) of the operators npc.ndarray
# fills in C++ (install_fast_operators in python/npc/csrc/bind_ops.cpp).
_OPERATOR_SLOTS = {"nb_negative": 30, "nb_positive": 32, "nb_absolute": 6, "nb_invert": 27, "nb_add": 7,
                   "nb_subtract": 36, "nb_multiply": 29, "nb_true_divide": 37, "nb_inplace_add": 14,
                   "nb_inplace_multiply": 18, "tp_richcompare": 67}


def _type_slots(t, slots):
    """The C functions in type `t`'s slots `slots` (name -> typeslots.h id)."""
    import ctypes
    get = ctypes.pythonapi.PyType_GetSlot
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_int]
    return {name: get(t, slot) for name, slot in slots.items()}


def _operator_slots():
    return _type_slots(npc.ndarray, _OPERATOR_SLOTS)


def test_compile_keeps_the_operator_slots():
    """Setting an operator's dunder on the type (and restoring it) makes CPython replace the
    type's C number slot by its generic one, which looks the method up on every call: eager
    `-a` would then take twice as long after the first compile. Tracing marks the scalar
    results of unary operators in the C++ slots themselves (Note [scalar results] in
    src/tracer/trace.hpp), so neither the slots nor the type's methods change, and eager
    unary operators keep NumPy's results and warnings."""
    names = ("__neg__", "__pos__", "__abs__", "__invert__", "__add__", "__iadd__", "__lt__")
    methods = {n: npc.ndarray.__dict__[n] for n in names}
    slots = _operator_slots()
    seen = []  # the type's methods in each call of f, traced or not

    def f(a, b):
        seen.append({n: npc.ndarray.__dict__[n] for n in names})
        x = a[1]
        return -x, +x, abs(-x), ~b[0], -a, abs(a), ~b, a[0] < x

    for backend in ("fused", "eager"):
        from npc import compiler
        compiler.reset()
        cf = npc.compile(f, backend=backend)
        for _ in range(3):  # the tracing call, then replays
            got = cf(npc.array([1.5, -2.5, 3.0]), npc.array([5, -6], np.int32))
            exp = f(np.array([1.5, -2.5, 3.0]), np.array([5, -6], np.int32))
            for g, e in zip(got, exp):
                assert_same(g, e)
    assert len(seen) > 6 and all(s == methods for s in seen)
    assert all(npc.ndarray.__dict__[n] is m for n, m in methods.items())
    assert _operator_slots() == slots
    for dt in (np.int8, np.int64, np.uint8, np.float32, np.bool_):
        a, e = pair(np.array([np.iinfo(dt).min if dt not in (np.float32, np.bool_) else 1, 1], dt))
        for op in (lambda x: -x, abs, lambda x: +x, lambda x: ~x, lambda x: -x[0], lambda x: abs(x[0])):
            with warnings.catch_warnings(record=True) as gw:
                warnings.simplefilter("always")
                try:
                    got = op(a)
                except TypeError as err:
                    got = (TypeError, str(err))
            with warnings.catch_warnings(record=True) as ew:
                warnings.simplefilter("always")
                try:
                    exp = op(e)
                except TypeError as err:
                    exp = (TypeError, str(err))
            if isinstance(exp, tuple):
                assert got == exp
            else:
                assert_same(got, exp)
            assert [str(w.message) for w in gw] == [str(w.message) for w in ew]


# typeslots.h ids of the subscript slots (Note [subscripts while tracing] in
# python/npc/csrc/bind_indexing.cpp).
_SUBSCRIPT_SLOTS = {"mp_ass_subscript": 3, "mp_subscript": 5, "sq_item": 44, "sq_ass_item": 45}


def _subscript_slots(t):
    return _type_slots(t, _SUBSCRIPT_SLOTS)


class _Sub(npc.ndarray):
    pass


def test_compile_keeps_the_subscript_slots():
    """Tracing never replaces ndarray.__getitem__/__setitem__ (the C++ slots call the
    capture layer's hooks for masks and element reads): setting a dunder swaps the type's C
    slots for CPython's generic ones (in ndarray and in subclasses that inherit them), and
    eager `a[0]` took eight times as long after any compile."""
    before = {t: _subscript_slots(t) for t in (npc.ndarray, _Sub)}
    getitem, setitem = npc.ndarray.__dict__["__getitem__"], npc.ndarray.__dict__["__setitem__"]

    def f(x, m):
        x[m] += 1
        y = x[1] * 2
        x[0] = y
        return x[2:], y

    for backend in ("fused", "eager"):
        cf = npc.compile(f, backend=backend)
        for _ in range(2):
            a, m = np.arange(5.0), np.arange(5) > 2
            got = cf(a.copy(), m)
            exp = f(a.copy(), m)
            for g, e in zip(got, exp):  # NumPy arguments give NumPy results
                assert type(g) is type(e) and g.dtype == e.dtype
                np.testing.assert_array_equal(g, e)
    assert {t: _subscript_slots(t) for t in (npc.ndarray, _Sub)} == before
    assert npc.ndarray.__dict__["__getitem__"] is getitem and npc.ndarray.__dict__["__setitem__"] is setitem
    # Eager indexing afterwards, of the type and of a subclass, as NumPy's.
    e = np.arange(6.0).reshape(2, 3)
    for a in (npc.array(e), npc.array(e).view(_Sub)):
        assert_same(a[1, 2], e[1, 2])
        assert_same(a[0], e[0])
        a[1, 1] = -1.0
        a[a > 3] = 0.0
        e2 = e.copy()
        e2[1, 1] = -1.0
        e2[e2 > 3] = 0.0
        assert_same(a, e2)
