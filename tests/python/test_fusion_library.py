"""Library calls inside fused graphs (docs/fusion.md, "Library calls"): matmul (`@`, np.matmul,
np.dot) stays a call of npc's matmul (CBLAS for floats) while its producers (elementwise
chains, casts, transposes) and its elementwise epilogues run in generated kernels around it.

Checked for every case: the result equals NumPy's (exactly for small integers, within the
forward error bound of a dot product for floats: the BLAS sums in another order), its dtype
and shape are NumPy's, no graph break, no eager fallback, generated kernels and the library
call both ran; the epilogue writes into the product's buffer (no full-size temporary).
"""
import os
import warnings

import numpy as np
import pytest

import npc

# Forward error bound of a length-k dot product, as in
# tests/numpy_conformance/test_linalg_products.py: FACTOR * k * eps * (|a| @ |b|).
DOT_BOUND_FACTOR = {np.dtype("float32"): 2.0, np.dtype("float64"): 2.0,
                    np.dtype("complex64"): 4.0, np.dtype("complex128"): 4.0}


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-library")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def run_compiled(fn, args, kernels=1, calls=1):
    """fn compiled (fused), called twice (trace, replay); asserts what ran; returns the result."""
    f = npc.compile(fn, backend="fused")
    out = None
    for _ in range(2):
        s0 = npc._fusion.stats()
        out = f(*args)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"], "the graph ran on the eager backend"
        assert s1["kernel_runs"] - s0["kernel_runs"] == kernels
        assert s1["library_calls"] - s0["library_calls"] == calls
    assert npc.explain(fn)(*args).graph_break_count == 0
    return np.asarray(out)


rng = np.random.default_rng(0)
X = rng.standard_normal((96, 40))
W = rng.standard_normal((40, 24))
B = rng.standard_normal(24)
A3 = rng.standard_normal((3, 8, 16))
B3 = rng.standard_normal((3, 16, 5))
C = (rng.standard_normal((6, 7)) + 1j * rng.standard_normal((6, 7)))

# (id, fn, args, generated kernels per call, library calls per call, (a, b, k, L) for the
# error bound: the product's operands and length, and the Lipschitz constant of the epilogue)
CASES = [
    ("mlp-relu", lambda x, w, b: np.maximum(x @ w + b, 0), (X, W, B), 1, 1, lambda x, w, b: (x, w, 40, 1)),
    ("tanh-times-2", lambda x, w: np.tanh(x @ w) * 2, (X, W), 1, 1, lambda x, w: (x, w, 40, 2)),
    ("producer-chain", lambda x, w: (x * 2 + 1) @ w - 3.0, (X, W), 2, 1, lambda x, w: (x * 2 + 1, w, 40, 1)),
    ("transposed-view", lambda x, w: (x.T @ x) * 0.5, (X, W), 1, 1, lambda x, w: (x.T, x, 96, 0.5)),
    ("strided-views", lambda x, w: np.abs(x[::2, ::-1] @ w[::-1]), (X, W), 1, 1,
     lambda x, w: (x[::2, ::-1], w[::-1], 40, 1)),
    ("np-dot", lambda x, w: np.dot(x, w) - 1.0, (X, W), 1, 1, lambda x, w: (x, w, 40, 1)),
    ("np-matmul-batched", lambda a, b: np.matmul(a, b) + 1, (A3, B3), 1, 1, lambda a, b: (a, b, 16, 1)),
    ("batch-broadcast", lambda a, w: (a * 2) @ w[:16, :5], (A3, W), 1, 1, lambda a, w: (a * 2, w[:16, :5], 16, 1)),
    ("matrix-vector", lambda x, b: x[:, :24] @ (b + 1), (X, B), 1, 1, lambda x, b: (x[:, :24], b + 1, 24, 1)),
    ("vector-vector", lambda x: x[0] @ x[1] + 2.0, (X,), 1, 1, lambda x: (x[0], x[1], 40, 1)),
    ("float32-casts", lambda x, w: (x.astype(np.float32) @ w.astype(np.float32)) * 2, (X, W), 3, 1,
     lambda x, w: (x.astype(np.float32), w.astype(np.float32), 40, 2)),
    ("complex", lambda c: np.abs(c @ c.T), (C,), 1, 1, lambda c: (c, c.T, 7, 1)),
]


@pytest.mark.parametrize("fn,args,kernels,calls,bound", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_product_with_fused_producers_and_epilogue(fn, args, kernels, calls, bound):
    got = run_compiled(fn, args, kernels, calls)
    want = np.asarray(fn(*args))
    assert got.dtype == want.dtype and got.shape == want.shape
    a, b, k, lip = bound(*args)
    prod = np.matmul(a, b)
    eps = np.finfo(prod.dtype).eps
    tol = lip * (DOT_BOUND_FACTOR[prod.dtype] * k * eps * np.matmul(np.abs(a), np.abs(b)) +
                 4 * eps * np.abs(prod)) + 4 * np.finfo(want.dtype).eps * np.abs(want)
    tol = np.broadcast_to(tol, want.shape) if np.ndim(tol) <= want.ndim else tol
    assert np.all(np.abs(got - want) <= tol + 1e-300)


def test_chained_products_share_one_call():
    # (x @ w) is interned once; the second product reads it, transposed, as a strided view.
    fn = lambda x, w: np.maximum((x @ w) @ (x @ w).T, 0.5)  # noqa: E731
    got = run_compiled(fn, (X, W), kernels=1, calls=2)
    want = fn(X, W)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


SMALL_PAIRS = [("int64", "int64"), ("int32", "float32"), ("bool", "bool"), ("uint8", "int8"),
               ("float16", "float16"), ("complex64", "float64")]


@pytest.mark.parametrize("da,db", SMALL_PAIRS, ids=lambda d: d)
def test_small_integers_exact(da, db):
    """Values exact in every summation order: bit-for-bit NumPy, dtype by NEP 50."""
    a = rng.integers(-2, 3, (5, 6)).astype(da)
    b = rng.integers(-2, 3, (6, 4)).astype(db)
    fn = lambda a, b: (a[::-1] @ b) * 3  # noqa: E731
    t = np.promote_types(da, db)
    casts = (np.dtype(da) != t) + (np.dtype(db) != t)  # each cast operand is materialised by a kernel
    got = run_compiled(fn, (a, b), kernels=1 + casts, calls=1)
    want = fn(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_epilogue_adds_no_full_size_temporary():
    x = rng.standard_normal((1024, 128))
    w = rng.standard_normal((128, 256))
    b = rng.standard_normal(256)
    fn = lambda x, w, b: np.maximum(x @ w + b, 0)  # noqa: E731
    # What the library call itself holds beyond its result (packing copies of operands).
    xn, wn = npc.asarray(x), npc.asarray(w)
    npc.reset_peak_memory_stats()
    base = npc.memory_stats()["current_bytes"]
    r = npc.matmul(xn, wn)
    library_extra = npc.memory_stats()["peak_bytes"] - base - r.nbytes
    del r
    f = npc.compile(fn, backend="fused")
    f(x, w, b)
    npc.reset_peak_memory_stats()
    base = npc.memory_stats()["current_bytes"]
    out = f(x, w, b)
    peak = npc.memory_stats()["peak_bytes"] - base
    # The product's buffer becomes the output: nothing else of that size is allocated.
    assert peak <= out.nbytes + library_extra + 4096, (peak, out.nbytes, library_extra)
    np.testing.assert_allclose(out, fn(x, w, b), rtol=1e-12, atol=1e-12)


def test_shape_mismatch_raises_numpys_error():
    f = npc.compile(lambda a, b: (a + 1) @ b, backend="fused")
    with pytest.raises(ValueError) as got:
        f(X, X)
    with pytest.raises(ValueError) as want:
        (X + 1) @ X
    assert str(got.value) == str(want.value)


def test_overflow_in_product_warns_as_eager_npc():
    """The product's overflow is reported from its values (Note [library call fp errors])."""
    a = np.full((4, 4), 1e200)
    fn = lambda a: (a @ a) - 1.0  # noqa: E731
    with warnings.catch_warnings(record=True) as eager, np.errstate(all="warn"):
        warnings.simplefilter("always")
        want = fn(npc.asarray(a))
    f = npc.compile(fn, backend="fused")
    for _ in range(2):
        with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
            warnings.simplefilter("always")
            got = f(a)
        assert sorted({str(x.message) for x in w}) == sorted({str(x.message) for x in eager})
        assert any("overflow encountered in matmul" in str(x.message) for x in w)
        np.testing.assert_array_equal(got, np.asarray(want))
