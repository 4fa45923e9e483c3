"""npc.compile with NumPy arrays that npc leaves to NumPy (Note [arguments that stay NumPy] in
python/npc/compiler/_guards.py): ndarray subclasses (np.matrix, masked arrays) keep their own
semantics, and writes into unaligned arguments reach the caller's memory. Every compiled call
is compared with the same function run by NumPy: the result (type, dtype, values, mask) and
the arguments afterwards."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-subclasses")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def assert_same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ma.MaskedArray):
        np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
        got, want = got.filled(0), want.filled(0)
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def unaligned(values):
    """A float64 array at an odd address (np.frombuffer at offset 1)."""
    buf = bytearray(8 * len(values) + 1)
    x = np.frombuffer(buf, np.float64, offset=1, count=len(values))
    x[:] = values
    assert not x.flags.aligned
    return x


# ---------------------------------------------------------------- unaligned arguments
def add_in_place(a):
    a += 1
    return a * 2


def assign_all(a):
    a[:] = 5
    return a.sum()


def assign_part(a):
    a[1:3] = a[:2] * 10
    return a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [add_in_place, assign_all, assign_part])
def test_writes_into_an_unaligned_argument_reach_the_caller(fn, backend):
    cf = npc.compile(fn, backend=backend)
    for call in range(3):  # trace, replay, replay
        x, y = unaligned(np.arange(5.0) + call), unaligned(np.arange(5.0) + call)
        got, want = cf(x), fn(y)
        assert_same(got, want)
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unaligned_argument_in_a_list(backend):
    def f(xs):
        xs[0] += xs[1]
        return xs[0] * 1

    cf = npc.compile(f, backend=backend)
    x, y = unaligned([1.0, 2.0, 3.0]), unaligned([1.0, 2.0, 3.0])
    b = np.ones(3)
    assert_same(cf([x, b]), f([y, b.copy()]))
    np.testing.assert_array_equal(x, y)


UNALIGNED_GLOBAL = unaligned([1.0, 2.0, 3.0])


def write_unaligned_global(v):
    UNALIGNED_GLOBAL[:] = v
    return UNALIGNED_GLOBAL + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_into_an_unaligned_captured_global(backend):
    cf = npc.compile(write_unaligned_global, backend=backend)
    for k in range(3):
        got = cf(np.full(3, float(k)))
        np.testing.assert_array_equal(UNALIGNED_GLOBAL, np.full(3, float(k)))
        assert_same(got, np.full(3, k + 1.0))


def test_unaligned_arguments_run_eagerly():
    cf = npc.compile(add_in_place)
    before = compiler.stats()["eager_runs"]
    cf(unaligned([1.0, 2.0]))
    assert compiler.stats()["eager_runs"] == before + 1
    assert compiler.stats()["traces"] == 0


# ---------------------------------------------------------------- ndarray subclasses
def masked():
    return np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])


def matrix():
    return np.matrix([[1.0, 2.0], [3.0, 4.0]])


SUBCLASS_CASES = {
    "ma_sum": (lambda a: np.sum(a), masked),
    "ma_method_sum": (lambda a: a.sum(), masked),
    "ma_mean": (lambda a: np.mean(a), masked),
    "ma_arith": (lambda a: a * 2 + 1, masked),
    "ma_ufunc": (lambda a: np.sqrt(a), masked),
    "ma_where_break": (lambda a: a * float(a.max()), masked),
    "matrix_mul": (lambda a: a * a, matrix),
    "matrix_pow": (lambda a: a ** 2, matrix),
    "matrix_sum_axis": (lambda a: a.sum(axis=0), matrix),
    "matrix_index": (lambda a: a[0], matrix),
    "matrix_scaled": (lambda a: np.exp(a) * 2, matrix),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SUBCLASS_CASES))
def test_ndarray_subclass_arguments_keep_numpy_semantics(name, backend):
    fn, make = SUBCLASS_CASES[name]
    cf = npc.compile(fn, backend=backend)
    for _ in range(2):
        assert_same(cf(make()), fn(make()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_subclass_with_plain_arguments(backend):
    def f(m, x):
        return m * x, x + 1

    cf = npc.compile(f, backend=backend)
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    for _ in range(2):
        (g0, g1), (w0, w1) = cf(matrix(), x), f(matrix(), x)
        assert_same(g0, w0)
        assert_same(g1, w1)
    # Plain arguments alone still compile.
    plain = npc.compile(lambda x: x + 1, backend=backend)
    assert_same(plain(x), x + 1)
    assert compiler.stats()["traces"] >= 1


with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MATRIX_GLOBAL = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED_GLOBAL = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])


def use_matrix_global(x):
    return MATRIX_GLOBAL * x


def use_masked_global(x):
    return np.sum(MASKED_GLOBAL) + x


@pytest.mark.parametrize("backend", BACKENDS)
def test_subclass_captured_globals_keep_numpy_semantics(backend):
    x = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert_same(npc.compile(use_matrix_global, backend=backend)(x), use_matrix_global(x))
    cf = npc.compile(use_masked_global, backend=backend)
    for v in (np.array(1.0), np.array([1.0, 2.0])):
        got, want = cf(v), use_masked_global(v)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype
