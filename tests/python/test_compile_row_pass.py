"""Matrix-vector products on both sides of one matrix in a compiled graph, computed in one
pass over the matrix's rows (Note [row passes] in src/ops/matvec_pass.cpp): BiCG's
`A @ p` and `r @ A`, A^T (A x) as a chain of two products. Values against NumPy within
rounding (NumPy leaves the summation order of its BLAS calls unspecified), dtypes, shapes
and layouts, which products join a pass, results that do not depend on the thread count,
and NumPy's warnings where a product is not finite."""
import warnings

import numpy as np
import pytest

import npc
from npc import _fusion, compiler

RTOL = {np.float64: 1e-12, np.float32: 2e-5}


def _data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run(f, args, calls=3):
    compiler.reset()
    cf = npc.compile(f, backend="fused")
    before = _fusion.stats()["merged_products"]
    for _ in range(calls):
        got = cf(*args)
    return got, (_fusion.stats()["merged_products"] - before) // calls


def _same(got, want, dtype):
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, dtype)
        return
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * np.abs(want).max())


def _merged(f, args, dtype=np.float64):
    """Runs compiled `f` on `args`, checks its result against NumPy's and returns how many of
    its products per call ran merged."""
    got, merged = _run(f, args)
    _same(got, f(*args), dtype)
    return merged


def _atax(A, x):
    return A.T @ (A @ x)


def _atax_both(A, x):
    y = A @ x
    return y, y @ A  # the intermediate leaves the graph too


def _bicg(A, p, r):
    return r @ A, A @ p


def _mvt(A, x1, x2, y1, y2):
    x1 = x1 + A @ y1
    x2 = x2 + A.T @ y2
    return x1, x2


def _chain_written_between(A, x):
    y = A @ x
    y += 1.0  # the vector of the second product is no longer the first's result
    return A.T @ y


def _chain_through_kernel(A, x):
    return A.T @ np.tanh(A @ x)


def _matrix_written_between(A, x, r):
    A = A.copy()
    q = A @ x
    A[0] += 1.0
    return q, r @ A


SHAPES = [(67, 71), (130, 257), (1003, 37), (37, 1003), (400, 500)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_chain_is_one_pass(dtype, shape):
    A, x = _data(shape, dtype, 1), _data(shape[1], dtype, 2)
    assert _merged(_atax, (A, x), dtype) == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES)
def test_both_sides_are_one_pass(dtype, shape):
    A, p, r = _data(shape, dtype, 3), _data(shape[1], dtype, 4), _data(shape[0], dtype, 5)
    assert _merged(_bicg, (A, p, r), dtype) == 2


@pytest.mark.parametrize("layout", ["C", "F", "rows", "reversed", "column vectors"])
def test_layouts(layout):
    A, p, r = _data((300, 260), np.float64, 6), _data(260, np.float64, 7), _data(300, np.float64, 8)
    if layout == "F":
        # A.T has contiguous rows: the pass walks A's columns, where A @ x sums columns and
        # A.T @ y needs all of y first (two passes).
        A = np.asfortranarray(A)
    elif layout == "rows":
        A = _data((600, 260), np.float64, 6)[::2]  # rows apart, each contiguous
    elif layout == "reversed":
        A = A[::-1]
    elif layout == "column vectors":
        p = _data((260, 3), np.float64, 7)[:, 1]
        r = _data((300, 5), np.float64, 8)[:, 4]
    assert _merged(_bicg, (A, p, r)) == 2
    assert _merged(_atax, (A, p)) == (0 if layout == "F" else 2)


def test_strided_columns_take_other_paths():
    # Columns apart: no contiguous rows either way; the products are NumPy's calls.
    A = _data((300, 520), np.float64, 9)[:, ::2]
    p, r = _data(260, np.float64, 10), _data(300, np.float64, 11)
    assert _merged(_bicg, (A, p, r)) == 0


def test_intermediate_leaves_the_graph():
    A, x = _data((200, 150), np.float64, 12), _data(150, np.float64, 13)
    got, merged = _run(_atax_both, (A, x))
    _same(got, _atax_both(A, x), np.float64)
    assert merged == 2
    assert not np.shares_memory(got[0], got[1])


def test_mvt_with_epilogues():
    A = _data((240, 240), np.float64, 14)
    vs = [_data(240, np.float64, 15 + k) for k in range(4)]
    assert _merged(_mvt, (A, *vs)) == 2


@pytest.mark.parametrize("f", [_chain_written_between, _chain_through_kernel])
def test_vector_changed_after_the_first_product(f):
    A, x = _data((200, 150), np.float64, 19), _data(150, np.float64, 20)
    assert _merged(f, (A, x)) == 0


def test_matrix_written_between():
    A, x, r = _data((200, 150), np.float64, 21), _data(150, np.float64, 22), _data(200, np.float64, 23)
    assert _merged(_matrix_written_between, (A, x, r)) == 0


def test_small_and_complex_matrices_take_other_paths():
    A, x = _data((40, 50), np.float64, 24), _data(50, np.float64, 25)
    assert _merged(_atax, (A, x)) == 0
    Z = _data((120, 100), np.float64, 26) + 1j * _data((120, 100), np.float64, 27)
    z = _data(100, np.float64, 28) + 0j
    got, merged = _run(_atax, (Z, z))
    np.testing.assert_allclose(got, _atax(Z, z), rtol=1e-12)
    assert merged == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bits_do_not_depend_on_threads(dtype):
    A, x = _data((3001, 1203), dtype, 29), _data(1203, dtype, 30)
    old = npc.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            npc.set_num_threads(n)
            got, merged = _run(_atax_both, (A, x), calls=1)
            assert merged == 2
            results.append(got)
    finally:
        npc.set_num_threads(old)
    for r in results[1:]:
        for g, w in zip(r, results[0]):
            assert g.tobytes() == w.tobytes()
    _same(results[0], _atax_both(A, x), dtype)


@pytest.mark.parametrize("bad", [np.inf, np.nan, 1e300])
def test_not_finite_runs_as_numpy(bad):
    A, p, r = _data((100, 90), np.float64, 31), _data(90, np.float64, 32), _data(100, np.float64, 33)
    A[7, 5] = bad
    if bad == 1e300:
        p[5] = 1e300  # overflows in the product
    compiler.reset()
    cf = npc.compile(_bicg, backend="fused")
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = cf(A, p, r)
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = _bicg(A, p, r)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.isfinite(g), np.isfinite(w))
            np.testing.assert_allclose(g[np.isfinite(w)], w[np.isfinite(w)], rtol=1e-12)
        assert {(m.category, str(m.message)) for m in got_w} == {(m.category, str(m.message)) for m in want_w}


@pytest.mark.parametrize("side", ["dot", "column sum"])
def test_sum_that_overflows_in_another_order_runs_as_numpy(side):
    # +M, -M, +M, -M: 0 in the pass's lane order, inf in a gemv's (Note [row pass bounds]).
    big = np.finfo(np.float64).max * 0.75
    A = np.zeros((64, 64))
    p, r = np.ones(64), np.ones(64)
    if side == "dot":
        A[0, [12, 0]], A[0, [24, 16]] = big, -big
    else:
        A[[12, 0], 0], A[[24, 16], 0] = big, -big
    compiler.reset()
    cf = npc.compile(_bicg, backend="fused")
    for _ in range(2):
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = cf(A, p, r)
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = _bicg(A, p, r)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        assert [str(m.message) for m in got_w] == [str(m.message) for m in want_w]
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match="overflow encountered in matmul"):
            _bicg(A, p, r)
        with pytest.raises(FloatingPointError, match="overflow encountered in matmul"):
            cf(A, p, r)


def test_large_finite_values_still_pass():
    # Far from overflow in any order: the pass runs.
    A, x = _data((120, 100), np.float64, 34) * 1e150, _data(100, np.float64, 35) * 1e150
    assert _merged(_atax, (A / 1e150, x)) == 2


def test_flags_of_every_thread_reach_the_caller():
    # Only the last rows' products underflow (float32): whichever thread runs them, the
    # compiled call raises as NumPy's single-threaded gemv does.
    rng = np.random.default_rng(36)
    A = rng.standard_normal((8000, 300)).astype(np.float32)
    p, r = rng.standard_normal(300).astype(np.float32), rng.standard_normal(8000).astype(np.float32)
    A[-10:] *= np.float32(1e-30)
    r[-10:] *= np.float32(1e-30)
    old = npc.get_num_threads()
    npc.set_num_threads(2)
    try:
        compiler.reset()
        cf = npc.compile(_bicg, backend="fused")
        for _ in range(5):
            with np.errstate(under="raise"):
                with pytest.raises(FloatingPointError, match="underflow encountered in matmul"):
                    _bicg(A, p, r)
                with pytest.raises(FloatingPointError, match="underflow encountered in matmul"):
                    cf(A, p, r)
        before = _fusion.stats()["merged_products"]
        cf(A, p, r)
        assert _fusion.stats()["merged_products"] - before == 2
    finally:
        npc.set_num_threads(old)
