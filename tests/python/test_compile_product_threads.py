"""Products in compiled graphs up to about 10 ms of work that move much memory for their work
(under 4 multiply-adds per element read or written) run with OpenBLAS on one thread (Note
[compiled products on one BLAS thread] in src/ops/blas.cpp): their values are NumPy's products
on one BLAS thread, whatever the layouts; other compiled products, and eager ones, are NumPy's
own calls; floating-point flags are reported."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

SHAPES = [(576000 // 8, 3, 8), (5000, 300, 40), (2000, 1000, 30), (2500, 700, 64), (70000, 40, 3), (130, 50, 20),
          (200, 256, 512)]


def _on_one_thread(shape):
    """Whether a compiled product of this (m, k, n) runs on one BLAS thread."""
    m, k, n = shape
    return m * k * n < 2**27 and m * k * n < 4.0 * (m * k + k * n + m * n)
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-product-threads")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache, eager_if_faster=False):
        compiler.reset()
        yield
        compiler.reset()


def _operands(shape, dtype, ta, tb):
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((k, m) if ta else (m, k))
    b = rng.standard_normal((n, k) if tb else (k, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(a.shape)
        b = b + 1j * rng.standard_normal(b.shape)
    a, b = a.astype(dtype), b.astype(dtype)
    return (a.T if ta else a), (b.T if tb else b)


_ONE_THREAD = """
import sys, numpy as np
sys.path.insert(0, {here!r})
from test_compile_product_threads import SHAPES, DTYPES, _operands
out = {{}}
for s in SHAPES:
    for d in DTYPES:
        for ta in (False, True):
            for tb in (False, True):
                a, b = _operands(s, d, ta, tb)
                out[f"{{s}}-{{np.dtype(d).name}}-{{ta}}-{{tb}}"] = a @ b
np.savez({path!r}, **out)
"""


@pytest.fixture(scope="module")
def one_thread_products(tmp_path_factory):
    """NumPy's products of every case, computed with OpenBLAS on one thread."""
    path = str(tmp_path_factory.mktemp("products") / "one_thread.npz")
    code = _ONE_THREAD.format(here=os.path.dirname(__file__), path=path)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return dict(np.load(path))


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_compiled_products_are_numpys_on_one_blas_thread_or_its_own(shape, backend, one_thread_products):
    for d in DTYPES:
        for ta in (False, True):
            for tb in (False, True):
                f = npc.compile(lambda a, b: a @ b, backend=backend)
                a, b = _operands(shape, d, ta, tb)
                want = one_thread_products[f"{shape}-{np.dtype(d).name}-{ta}-{tb}"] if _on_one_thread(shape) else a @ b
                got = f(a, b)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want, err_msg=f"{d} {ta} {tb}")


def test_eager_products_are_numpys_own():
    for shape in SHAPES:
        for d in DTYPES:
            a, b = _operands(shape, d, False, True)
            np.testing.assert_array_equal(np.asarray(npc.asarray(a) @ npc.asarray(b)), a @ b)


@pytest.mark.parametrize("rows", [0, -1])
def test_overflow_in_any_block_is_reported(rows):
    # A product OpenBLAS would split among its threads, overflowing in its first or its last
    # row only: the report does not depend on which row overflows.
    a = np.ones((200000, 16))
    a[rows] = 1e300
    b = np.full((16, 4), 1e10)
    f = npc.compile(lambda a, b: a @ b, backend="fused")
    for _ in range(2):
        with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
            warnings.simplefilter("always")
            got = f(a, b)
        assert any("overflow encountered in matmul" in str(x.message) for x in w), [str(x.message) for x in w]
        assert np.isinf(got[rows]).all() and np.isfinite(np.delete(got, rows, axis=0)).all()


def test_large_compiled_products_are_numpys_threaded_ones():
    # Above about 10 ms of work OpenBLAS keeps its threads: NumPy's product in this process.
    for d in (np.float32, np.complex128):
        a, b = _operands((4000, 700, 64), d, False, True)
        f = npc.compile(lambda a, b: a @ b, backend="fused")
        np.testing.assert_array_equal(f(a, b), a @ b)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_timed_products_are_numpys_own_then_either_way_then_settled(dtype, one_thread_products):
    # Note [timed product threads] in src/fusion/backend.cpp: the first run is NumPy's threaded
    # call, the next ones alternate with one-thread runs until one way is chosen; every result is
    # one of the two, and the calls after the choice give the same bits.
    shape = (200, 256, 512)
    a, b = _operands(shape, dtype, False, False)
    threaded = a @ b
    one = one_thread_products[f"{shape}-{np.dtype(dtype).name}-False-False"]
    f = npc.compile(lambda a, b: a @ b + 1)
    got = [f(a, b) for _ in range(10)]
    np.testing.assert_array_equal(got[0], threaded + 1)
    for g in got:
        assert np.array_equal(g, threaded + 1) or np.array_equal(g, one + 1)
    for g in got[8:]:  # six timed runs at most before the eighth call
        np.testing.assert_array_equal(g, got[7])


_ONE_THREAD_GEMV = """
import numpy as np
rng = np.random.default_rng(3)
A = rng.standard_normal((1500, 1000)); x = rng.standard_normal(1000); y = rng.standard_normal(1500)
np.savez({path!r}, Ax=A @ x, yA=y @ A)
"""


@pytest.mark.parametrize("side", ["Ax", "yA"])
def test_timed_matrix_vector_products(side, tmp_path):
    # Matrix-vector products from 2^20 multiply-adds on are timed as well (kTimedVectorMinWork
    # in src/ops/blas.cpp): NumPy's threaded call first, then either way, then settled.
    path = str(tmp_path / "gemv.npz")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", _ONE_THREAD_GEMV.format(path=path)], env=env, check=True)
    one = np.load(path)[side]
    rng = np.random.default_rng(3)
    A = rng.standard_normal((1500, 1000))
    v = rng.standard_normal(1000) if side == "Ax" else (rng.standard_normal(1000), rng.standard_normal(1500))[1]
    fn = (lambda A, v: A @ v + 1) if side == "Ax" else (lambda A, v: v @ A + 1)
    threaded = A @ v if side == "Ax" else v @ A
    f = npc.compile(fn)
    got = [f(A, v) for _ in range(10)]
    np.testing.assert_array_equal(got[0], threaded + 1)
    for g in got:
        assert np.array_equal(g, threaded + 1) or np.array_equal(g, one + 1)
    for g in got[8:]:
        np.testing.assert_array_equal(g, got[7])


@pytest.mark.parametrize("side", ["Ax", "yA"])
def test_large_matrix_vector_products_are_numpys_threaded_ones(side):
    # From 2^23 multiply-adds on (kThreadedVectorWork in src/ops/blas.cpp) a matrix-vector
    # product is NumPy's threaded call on every run, not timed against one thread.
    rng = np.random.default_rng(5)
    A = rng.standard_normal((3000, 2800))
    v = rng.standard_normal(2800 if side == "Ax" else 3000)
    fn = (lambda A, v: A @ v * 2) if side == "Ax" else (lambda A, v: v @ A * 2)
    want = (A @ v if side == "Ax" else v @ A) * 2
    f = npc.compile(fn)
    for _ in range(8):
        np.testing.assert_array_equal(f(A, v), want)
