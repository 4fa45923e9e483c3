"""Warnings of compiled functions against NumPy running the same function, on the tracing
call and on replays: Python-level warnings raised while tracing (ComplexWarning of astype,
"Mean of empty slice", "Degrees of freedom <= 0") are shown on every replay (Note [warnings
of traced Python] in python/npc/compiler/_capture.py); operations that npc's own functions run
under numpy.errstate report under it (nanmean's 0/0); products name NumPy's function. Known
differences are strict xfails."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-warnings")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def break_at_product(a):
    # Batch shapes (3,) and (1,): the product is not recorded, its operands are realized.
    v = np.divide(a, 0)[0, 1:, None]
    return v @ v.T, np.matmul(v, v.T), np.dot(v[:, 0], v[:, 0].T)


def python_level(a):
    b = a.astype(np.float64)          # ComplexWarning
    return b * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, x", [
    (python_level, np.array([1 + 2j, 3 - 1j])),
    (lambda a: np.nanmean(a, axis=0), np.array([[np.nan, 1.0]])),
    (lambda a: np.nanvar(a, axis=0, ddof=2), np.array([[1.0, 2.0]])),
    (lambda a: np.nanstd(a[None], axis=0, ddof=1), np.array([1.0, 2.0])),
    (lambda a: np.mean(a[:0], axis=0), np.ones((3, 2))),
    (lambda a: np.cosh(np.abs(a)) + np.log(a), np.array([1000.0, -1.0, 0.0])),
    (break_at_product, np.ones((1, 4, 1), np.float32)),
])
def test_warnings_on_trace_and_replay(f, x, backend):
    check(f, (x,), (x,), (x,), backend=backend)


def dead_log(a1):
    v1 = np.log(a1)  # noqa: F841  (unused: NumPy still warns)
    return a1 * 1


def warn_then_raise(a):
    y = np.log(a)  # noqa: F841
    raise ValueError("after the warning")


@pytest.mark.xfail(strict=True, reason="a traced operation whose result is unused is removed with the dead "
                                       "code (dce), so its floating-point warning is not raised")
@pytest.mark.parametrize("backend", BACKENDS)
def test_dead_operation_warns(backend):
    check(dead_log, (np.array([-3.0]),), backend=backend)


def write_then_raise(a):
    a += 1
    y = np.sqrt(a - 5)  # noqa: F841
    raise ValueError("after the write")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [warn_then_raise, write_then_raise])
def test_operations_before_an_exception_run(f, backend):
    # Their warnings come before the exception and their writes reach the argument.
    check(f, (np.array([-1.0, 2.0]),), (np.array([-1.0, 2.0]),), backend=backend)
    with np.errstate(invalid="raise"):
        check(f, (np.array([-1.0, 2.0]),), backend=backend)


PRODUCTS = [
    lambda a, b: np.dot(a, b),
    lambda a, b: np.inner(a, b),
    lambda a, b: np.vdot(a, b),
    lambda a, b: a @ b,
    lambda a, b: np.dot(np.stack([a, b]), a),
    lambda a, b: np.inner(np.stack([a, b]), b) + 1,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(PRODUCTS)))
def test_product_warnings_name_numpys_function(k, backend):
    # overflow, then invalid (inf * 0): "in dot" for np.dot/np.inner, "in matmul" for @,
    # nothing for np.vdot.
    f = PRODUCTS[k]
    big = np.array([1e200, 1e200])
    check(f, (big, big), (np.array([np.inf, 0.0]), np.array([0.0, np.inf])), (big, big), backend=backend)


def raise_inside_errstate(a):
    with np.errstate(divide="ignore"):
        y = np.log(a)  # noqa: F841
        raise ValueError("inside the block")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("outer", [{}, {"invalid": "raise"}, {"divide": "raise"}])
def test_exception_inside_errstate(outer, backend):
    # The block's operations report under its state, before the exception leaves it.
    with np.errstate(**outer):
        check(raise_inside_errstate, (np.array([0.0, -1.0, 2.0]),), (np.array([0.0, 2.0]),), backend=backend)


COMPLEX_FILLS = [
    lambda a: np.full_like(a, 1j),
    lambda a: np.full_like(a, 2 - 1j, dtype=np.int8),
    lambda a: np.full_like(a, np.complex64(1j)) + a,
    lambda a: np.full((2,), 1j, dtype=np.float32),
    lambda a: np.full_like(a, 1j, dtype=complex),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(COMPLEX_FILLS)))
def test_complex_fill_of_a_real_array_warns(k, backend):
    # NumPy's full/full_like cast the fill value with copyto(casting='unsafe'): ComplexWarning.
    x = np.ones(2, np.float16)
    check(COMPLEX_FILLS[k], (x,), (x,), backend=backend)


EMPTY_RESULTS = [
    lambda a: np.log2(np.hstack([a, a])),            # log2 of an empty constant fill
    lambda a: np.hstack([a, a]) / np.hstack([a, a]),
    lambda a: np.divmod(np.hstack([a, a]), 0.0),
    lambda a: np.hstack([a, a]) * 1e300,             # the weak scalar's cast still warns
    lambda a: np.log2(a[:0]) + 70000,
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("k", range(len(EMPTY_RESULTS)))
def test_empty_results_raise_no_floating_point_errors(k, backend):
    # Note [empty ufunc results] in src/tracer/trace_hooks.cpp.
    x = np.zeros(0, np.float16)
    check(EMPTY_RESULTS[k], (x,), (x,), backend=backend)


# isfinite/isinf/isnan raise nothing on NaN, in a vectorized kernel too (followed by a cast).
CLASSIFY = [
    lambda a: np.isfinite(np.real(a)).astype(np.uint32),
    lambda a: np.isinf(np.real(a)).astype(np.uint32),
    lambda a: np.isnan(np.real(a) * 1).astype(np.uint32),
    lambda a: np.isfinite(a).astype(np.uint8) + np.isinf(a),
]


@pytest.mark.parametrize("backend", ("eager", "fused"))
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("k", range(len(CLASSIFY)))
def test_classification_of_nan_is_quiet(k, dt, backend):
    from _compile_diff import check
    a = np.array([complex(np.nan, 1), 1, complex(1, np.nan), complex(np.inf, 0), complex(-np.inf, np.nan), 0] * 5, dt)
    check(CLASSIFY[k], (a,), (a[::-1],), backend=backend)
    check(CLASSIFY[k], (a.real.copy(),), backend=backend)


# NumPy reports the errors of a ufunc's cast into out= under the ufunc's name.
def ipow_by_argmin(c):
    v = c.argmin(axis=-1)
    c **= v
    return c


def power_into_out(c):
    np.power(c, np.int64(3), out=c)
    return c


def multiply_into_out(c):
    np.multiply(c, np.arange(4), out=c)
    return c


@pytest.mark.parametrize("backend", ("eager", "fused"))
@pytest.mark.parametrize("f", [ipow_by_argmin, power_into_out, multiply_into_out])
def test_cast_into_out_warns_with_the_ufunc_name(f, backend):
    from _compile_diff import check
    a = np.array([3, 3 + 1.5j, complex(3.4028234663852886e+38, 1.0), 1], np.complex64)
    check(f, (a,), (a,), backend=backend)
    check(f, (a.real.copy(),), backend=backend)


def masked_cast_with_a_float_argument(a, s):
    a[a >= -1] = 4294967296  # "overflow encountered in cast" to float16
    return a * s


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_of_a_trace_retraced_with_static_floats_are_shown_once(backend):
    # The masked write is a break, which makes the float argument static: the function is
    # traced again, and the first attempt's pending errors go with its warnings (fuzzer seed
    # 101653 warned twice). The cast of the value comes before the break's segment runs: the
    # eager backend's interpreter kept its flags for the assignment's report (it dropped them).
    x = np.array(1.0, np.float16)
    check(masked_cast_with_a_float_argument, (x, 0.5), (x, 0.5), (x, 0.25), backend=backend)


def complex_astype_then_int_fill(a, s):
    a.astype(np.uint16)  # ComplexWarning
    a[...] = s


@pytest.mark.parametrize("backend", BACKENDS)
def test_warnings_of_a_trace_retraced_with_static_ints_are_shown_once(backend):
    # A new int value makes it a runtime int; the trace raises with it, so the function is
    # traced again with it static: the first attempt's ComplexWarning is dropped, the
    # retrace's shown (fuzzer seed 800072 warned twice on the second call).
    check(complex_astype_then_int_fill, (np.array(1 + 0j), 2), (np.array(1 + 0j), 3), (np.array(2 + 0j), 4),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_of_a_masked_write_at_a_break_warns(backend):
    def f(a):
        m = a >= -1
        float(a)
        a[m] = 4294967296
        return a

    check(f, (np.array(1.0, np.float16),), (np.ones(3, np.float16),), backend=backend)


def complex_mask_write(a0):
    a0[a0 >= -1] = 1e-40  # the -1 is cast to complex in the graph: the first node
    return a0.sum()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, x", [
    # A complex ordered comparison raises "invalid" for a NaN part (C's ordered operators, as
    # in NumPy's loop); the warning names the comparison, not an earlier cast of a constant.
    (complex_mask_write, np.array([np.nan + 0j, -3.4e38 + 0j, 1 + 1j, -0.5 - 2j], np.complex64)),
    (lambda a: (a.astype(np.complex64) < 2).sum(), np.array([np.nan, 1.0, 3.0])),
    # A float cast raises "overflow" into a narrower float from finite values (into an integer,
    # NumPy's warning depends on its loop: Note [unspecified casts] in tests/fuzz/fuzzgen.py).
    (lambda a: a.astype(np.float32) * 2, np.array([1e300, 1.0])),
    (lambda a: (a + 1).astype(np.complex64) - 1j, np.array([1e300, 1.0])),
    # A NaN Python float cast to float16 raises nothing; logaddexp's comparison of it does.
    (lambda a: np.logaddexp(a, float("nan")), np.array(1.0, np.float16)),
])
def test_warning_names_of_comparisons_and_casts(f, x, backend):
    check(f, (x,), (x,), backend=backend)
