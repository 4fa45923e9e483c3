"""Python operators on NumPy scalars run NumPy's scalar arithmetic, whose floating-point
warnings say "... in scalar divide" (Note [scalar math] in src/tracer/trace.hpp). In compiled
functions those scalars are traced 0-d values; the operators on them are recorded as scalar
arithmetic, and npc's mean, var, std and median divide their full reductions as NumPy's do.
Both backends against NumPy running the same function; eager npc too for the library
functions."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check, outcome


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-scalar-math")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


OPERATORS = {
    "sum_by_zero": lambda a: a.sum() / 0,
    "sum_by_intp": lambda a: a.sum() / np.intp(0),
    "float32_by_intp": lambda a: a.astype(np.float32).sum() / np.intp(0),   # a ufunc: "in divide"
    "float32_by_float": lambda a: a.astype(np.float32).sum() / 0.0,
    "float_to_power": lambda a: (-1.0) ** a.min(),
    "power_half": lambda a: a.min() ** 0.5,                                   # not sqrt
    "power_two": lambda a: (a.min() * 1e200) ** 2,                           # not square
    "remainder": lambda a: a.max() % 0.0,
    "negative_of_quotient": lambda a: -(a.max() / 0),
    "element_by_element": lambda a: a[0] / a[1],
    "divmod": lambda a: divmod(a.max(), 0.0),
    # a bool scalar has no arithmetic of its own: on the left (or on the right of a Python
    # number) the ufunc runs, "in floor_divide"; on the right of a uint32 scalar its scalar
    # arithmetic does (fuzzer seed 102126)
    "bool_by_uint32": lambda a: a.astype(np.uint32).all(keepdims=True) // a.astype(np.uint32).min(),
    "bool_by_bool": lambda a: a.all(keepdims=True) // a.any(),
    "python_int_by_bool": lambda a: 5 // a.all(),
    "bool_by_python_bool": lambda a: a.all() / False,
    "uint32_by_bool": lambda a: a.astype(np.uint32).max() // a.all(),
    "float32_by_bool": lambda a: a.astype(np.float32).max() / a.all(),
    # not scalar arithmetic: arrays, ufunc calls
    "array_by_zero": lambda a: a / 0,
    "ufunc_of_scalar": lambda a: np.divide(a.sum(), 0),
    "scalar_by_0d_array": lambda a: a.sum() / np.array(0.0),
    "array_divmod": lambda a: np.divmod(a, 0.0),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators_on_scalars_warn_as_scalar_math(name, backend):
    x = np.array([0.0, -1.0])
    check(OPERATORS[name], (x,), (x,), backend=backend)


LIBRARY = {
    "var_ddof": (lambda a: a.var(ddof=1), np.array([2.0])),
    "std_ddof": (lambda a: np.std(a, ddof=3), np.array([1.0, 2.0])),
    "mean_of_empty": (lambda a: a[:0].mean(), np.array([1.0, 2.0])),
    "mean_of_ptp": (lambda a: np.ptp(a).var(ddof=1), np.array([1, 5], np.int16)),
    "var_keepdims": (lambda a: a.var(axis=None, keepdims=True, ddof=1), np.array([1.0])),
    "median_nan_inf": (lambda a: np.median(a), np.array([np.inf, -np.inf, 1.0, np.nan])),
    "median_infs": (lambda a: np.median(a), np.array([np.inf, -np.inf])),
    "median_keepdims": (lambda a: np.median(a, axis=None, keepdims=True), np.array([np.inf, -np.inf])),
    "median_keepdims_0d": (lambda a: np.median(a.argmin(axis=-1), axis=None, keepdims=True), np.array([2.0, 1.0])),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_full_reductions_divide_as_numpy(name, backend):
    f, x = LIBRARY[name]
    check(f, (x,), (x,), backend=backend)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_full_reductions_divide_as_numpy_eagerly(name):
    f, x = LIBRARY[name]
    import types
    g = types.FunctionType(f.__code__, {"np": npc})
    got, gw, _ = outcome(g, (npc.asarray(x),))
    want, ww, _ = outcome(f, (x,))
    assert gw == ww
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# Note [quiet scalar complex comparisons] in src/tracer/trace_hooks.cpp: NumPy compares complex
# scalars quietly and lexicographically (its array loops warn on NaN parts).
COMPLEX_VALUES = [complex(np.nan, 0), 1, complex(0, np.nan), 1 + 1j, 1 - 1j, complex(1, np.nan),
                  complex(np.nan, np.nan), 0j, complex(np.inf, 1)]


def complex_scalar_comparisons(a, b):
    x, y = a[0], b[0]
    m = np.median(a)
    return x < y, x <= y, x > y, x >= y, m >= m, y < m


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_scalar_comparisons_are_quiet(dt, backend):
    a = np.array(COMPLEX_VALUES, dt)
    calls = [(a[i:i + 1], a[j:j + 1]) for i in range(len(a)) for j in range(len(a))]
    check(complex_scalar_comparisons, *calls, backend=backend)
