"""npc.compile with 0-d arrays: full reductions of 0-d values (arguments or made inside the
function), and results that NumPy returns as 0-d arrays rather than as NumPy scalars. Each
compiled call (trace and replay, both backends) is compared with the same function run by
NumPy: the result's type (numpy scalar or ndarray), dtype, shape and value."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-zero-d")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            r = (type(e), str(e))
    return r, [(m.category, str(m.message)) for m in w]


def assert_same(got, want):
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], type):
        assert got == want
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    assert type(got) is type(want), (type(got), type(want), got, want)
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def check(fn, *args, backend, calls=2):
    cf = npc.compile(fn, backend=backend)
    for _ in range(calls):
        fresh = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        got, gw = outcome(cf, *args)
        want, ww = outcome(fn, *fresh)
        assert_same(got, want)
        assert gw == ww


# ---------------------------------------------------------------- full reductions of 0-d values
REDUCTIONS = {
    "sum": lambda a: np.sum(a),
    "prod": lambda a: np.prod(a),
    "min": lambda a: np.min(a),
    "max": lambda a: np.max(a),
    "any": lambda a: np.any(a),
    "all": lambda a: np.all(a),
    "mean": lambda a: np.mean(a),
    "var": lambda a: np.var(a),
    "std": lambda a: np.std(a),
    "nansum": lambda a: np.nansum(a),
    "count_nonzero": lambda a: np.count_nonzero(a),
    "method_min": lambda a: a.min(),
    "method_sum_keepdims": lambda a: a.sum(keepdims=True),
    "sum_initial": lambda a: np.sum(a, initial=3),
    "max_initial": lambda a: np.max(a, initial=5),
    "sum_no_axes": lambda a: np.sum(a, axis=()),
    "ufunc_reduce": lambda a: np.add.reduce(a, axis=None),
    "reduce_of_result": lambda a: (a * 2 + 1).max(),
}
ZERO_D = {
    "float64": np.array(2.5),
    "nan": np.array(np.nan),
    "int32": np.array(-3, np.int32),
    "bool": np.array(True),
    "float32": np.array(0.0, np.float32),
    "complex128": np.array(1 + 2j),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(ZERO_D))
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_full_reduction_of_a_zero_d_argument(name, dtype, backend):
    check(REDUCTIONS[name], ZERO_D[dtype], backend=backend)


MADE_INSIDE = {
    "last_mean_keepdims": lambda a: a[-1].mean(keepdims=True),
    "dot_max": lambda a: np.dot(a, a).max(),
    "element_sum": lambda a: np.sum(a[0]),
    "element_any": lambda a: (a[1] > 0).any(),
    "reshape_prod": lambda a: a[:1].reshape(()).prod(),
    "sum_no_axes_1d": lambda a: np.sum(a, axis=()),
    "max_no_axes_initial": lambda a: np.maximum.reduce(a, axis=(), initial=1.5),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MADE_INSIDE))
def test_full_reduction_of_a_zero_d_value_made_inside(name, backend):
    check(MADE_INSIDE[name], np.array([1.0, -2.0, 3.5]), backend=backend)


# ---------------------------------------------------------------- 0-d arrays versus NumPy scalars
VEC = np.arange(1.0, 4.0)
MAT = np.arange(6.0).reshape(2, 3)
ZERO = np.array(2.5)
ZERO_D_RESULTS = {
    # NumPy returns 0-d arrays
    "where": (lambda s: np.where(s == 0, -1, 3.0), ZERO),
    "where_of_scalars": (lambda x: np.where(x.sum() > 1, x.sum(), 0.0), VEC),
    "astype": (lambda x: x.astype(np.uint16), ZERO),
    "tensordot": (lambda x: np.tensordot(x, x, axes=1), VEC),
    "zeros_of_shape": (lambda v: np.zeros(v.shape), ZERO),
    "zeros": (lambda x: np.zeros(()) + 0 * x, VEC[:1]),
    "copy": (lambda x: x.copy(), ZERO),
    "np_copy": (lambda x: np.copy(x), ZERO),
    "reshape": (lambda x: x[:1].reshape(()), VEC),
    "squeeze": (lambda x: x[:1].squeeze(), VEC),
    "ellipsis_of_element": (lambda x: x[0][...], VEC),
    "asarray_of_sum": (lambda x: np.asarray(x.sum()), VEC),
    "ones_like": (lambda x: np.ones_like(x), ZERO),
    "sum_keepdims": (lambda x: x.sum(keepdims=True), ZERO),
    "argument": (lambda x: x, ZERO),
    # NumPy returns scalars
    "sum": (lambda x: np.sum(x), VEC),
    "method_mean": (lambda x: x.mean(), VEC),
    "element": (lambda x: x[0], VEC),
    "element_2d": (lambda x: x[1, 2], MAT),
    "ufunc_of_0d": (lambda x: np.sin(x), ZERO),
    "add_of_0d": (lambda x: x + 1, ZERO),
    "astype_of_sum": (lambda x: x.sum().astype(np.float32), VEC),
    "copy_of_element": (lambda x: x[1].copy(), VEC),
    "dot": (lambda x: np.dot(x, x), VEC),
    "matmul": (lambda x: x @ x, VEC),
    "argmax": (lambda x: x.argmax(), VEC),
    "median": (lambda x: np.median(x), VEC),
    "neg_of_sum": (lambda x: -x.sum(), VEC),
    "clip_of_sum": (lambda x: np.clip(x.sum(), 0, 1), VEC),
    "norm": (lambda x: np.linalg.norm(x), VEC),
    "take": (lambda x: np.take(x, 1), VEC),
    "element_of_sort": (lambda x: np.sort(x)[0], VEC),
    "all_of_0d": (lambda x: np.all(x), ZERO),
    "tuple": (lambda x: (x.sum(), np.where(x > 1, x, 0)[0:1].reshape(())), VEC),
    "real_of_scalar": (lambda x: np.real(x * 1j + 1), ZERO),
    "imag_of_scalar": (lambda x: np.imag(x * 1j + 1), ZERO),
    "real_attribute_of_sum": (lambda x: (x * 1j).sum().real, VEC),
    "imag_attribute_of_element": (lambda x: (x * 1j)[1].imag, VEC),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(ZERO_D_RESULTS))
def test_zero_d_results_are_arrays_or_scalars_as_in_numpy(name, backend):
    fn, arg = ZERO_D_RESULTS[name]
    check(fn, arg, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_d_results_after_a_break(backend):
    def f(x):
        float(x[0])
        return x.astype(np.float32)[0:1].reshape(()), x.sum(), np.where(x[0] > 0, 1, 2)

    check(f, VEC, backend=backend)


CVEC = np.array([1 + 2j, np.nan, 3j])
REALIZED_SCALARS = {
    # A scalar result that a graph break realizes stays a scalar result.
    "nanmax_complex": (lambda x: np.nanmax(x), CVEC),
    "nanmin_complex": (lambda x: np.nanmin(x), CVEC),
    "nanmax_complex_0d": (lambda x: np.nanmax(x), np.array(1 + 1j)),
    "nanmax_float32": (lambda x: np.nanmax(x), np.array([1.0, np.nan], np.float32)),
    "nanmin_axis": (lambda x: np.nanmin(x, axis=0), VEC),
    "max_then_float": (lambda x: (float(np.max(x)), np.max(x))[1], VEC),
    "float_of_max": (lambda x: [m := np.max(x), float(m), m][2], VEC),
    "element_then_int": (lambda x: [e := x[1], int(e), e][2], VEC),
    "complex_max_then_float": (lambda x: [m := x.max(), float(m), m][1], CVEC[::2]),
    # methods of a realized scalar result give scalars (computed eagerly after the break)
    "nanmin_astype": (lambda x: np.nanmin(x).astype(np.int64), np.array(1 + 0j)),
    "nanmax_astype": (lambda x: np.nanmax(x).astype(np.float32), VEC),
    "nanmax_conj": (lambda x: np.nanmax(x).conj(), CVEC),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(REALIZED_SCALARS))
def test_scalar_results_realized_at_a_break(name, backend):
    fn, arg = REALIZED_SCALARS[name]
    check(fn, arg, backend=backend)


def test_eager_take_and_tensordot_return_what_numpy_returns():
    x = npc.arange(3.0)
    assert type(npc.take(x, 1)) is np.float64
    assert type(npc.tensordot(x, x, axes=1)) is npc.ndarray and npc.tensordot(x, x, axes=1).ndim == 0
