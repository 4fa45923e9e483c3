"""Ordered float comparisons in fused kernels (Note [sanitized comparisons] in
include/npc/scalar_rules.hpp): every pair of special values, array against array and against
a scalar, gives NumPy's results and raises no floating-point error (NaN compares false,
-0.0 == 0.0), with both compile backends."""
import warnings

import numpy as np
import pytest

import npc

SPECIAL = [np.nan, -np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324, 1e-310,
           1.7976931348623157e308, -1.7976931348623157e308, 3.0, 3.0000000000000004]


def _pairs(dtype):
    with np.errstate(all="ignore"):
        v = np.array(SPECIAL, dtype=dtype)
    a = np.repeat(v, v.size)
    b = np.tile(v, v.size)
    return a, b


OPS = {
    "less": lambda a, b: a < b,
    "less_equal": lambda a, b: a <= b,
    "greater": lambda a, b: a > b,
    "greater_equal": lambda a, b: a >= b,
    "band": lambda a, b: (b <= a) & (a < b + 1),
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
}


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", sorted(OPS))
def test_special_pairs_match_numpy_without_errors(op, dtype, backend):
    a, b = _pairs(dtype)
    fn = OPS[op]
    with np.errstate(all="raise"):
        want = fn(a, b)
        got = npc.compile(fn, backend=backend)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f" and op != "fmax":  # -0.0 against 0.0 too
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("bound", [0.0, -0.0, 1.0, np.inf, -np.inf, np.nan])
def test_compare_against_scalar_bound(bound, backend):
    a, _ = _pairs(np.float64)

    def fn(x, lo):
        return (lo <= x) & (x < 3.0), x > lo, x == lo, x != lo

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            want = fn(a, bound)
            got = npc.compile(fn, backend=backend)(a, bound)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.xfail(strict=True, reason="npc's fmax picks the other zero of (-0.0, 0.0) and (0.0, -0.0) than "
                   "NumPy's loop, eagerly and compiled (the eager rule, not the comparisons)")
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_fmax_signed_zeros(backend):
    a = np.array([-0.0, 0.0] * 16)
    b = np.array([0.0, -0.0] * 16)
    got = npc.compile(np.fmax, backend=backend)(a, b)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.fmax(a, b)))
