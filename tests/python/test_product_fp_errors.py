"""Floating-point warnings of matrix products (numpy.matmul, dot, inner, tensordot) are
NumPy's when the operands hold infinities, NaNs or values whose products overflow: found
again from the operands of the product (Note [product FP errors] in python/npc/_linalg.py).
Eager npc against NumPy on the same values."""
import warnings

import numpy as np
import pytest

import npc

BIG32 = 3.4028234663852886e+38
INF, NAN = np.inf, np.nan


def _warnings(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, sorted((m.category.__name__, str(m.message)) for m in w)


CASES = {
    "complex_dot_overflow_with_nan": ("dot", [np.array([3.5 - 4j, complex(-BIG32, NAN), -3.5 + 1.5j], np.complex64)] * 2),
    "float_dot_overflow_with_inf": ("dot", [np.array([BIG32, 2.0, -0.75, 3.0, -INF], np.float32)] * 2),
    "inf_times_zero": ("dot", [np.array([INF, 1.0]), np.array([0.0, 1.0])]),
    "inf_minus_inf": ("matmul", [np.array([[INF, 1.0]]), np.array([[1.0], [-INF]])]),
    "nan_only": ("dot", [np.array([NAN, 1.0]), np.array([2.0, 1.0])]),
    "inf_times_finite": ("dot", [np.array([INF, 1.0]), np.array([2.0, 1.0])]),
    "sum_overflow": ("matmul", [np.full((2, 3), 1e308), np.full((3, 2), 1.0)]),
    "inner_complex": ("inner", [np.array([3.5 - 4j, complex(-BIG32, NAN), -3.5 + 1.5j], np.complex64),
                                np.array([-3.5 + 1.5j, 1j, 2.0], np.complex64)]),
    "matrix_mixed": ("matmul", [np.array([[BIG32, 2.0, -INF], [1.0, 0.0, 2.0]], np.float32),
                                np.array([[BIG32, 1.0], [2.0, INF], [0.0, -1.0]], np.float32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_product_warnings_are_numpys(name):
    fname, args = CASES[name]
    want, ww = _warnings(getattr(np, fname), *args)
    got, gw = _warnings(getattr(npc, fname), *[npc.asarray(a) for a in args])
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert gw == ww


def test_tensordot_of_broadcast_operand_warns_as_numpy():
    c = np.array([BIG32, 2.0, -0.75, 3.0, -INF, -3.0, 1.25, 0.5, 0.0, 2.0, -2.0, BIG32, -3.0, -0.75,
                  1.1754943508222875e-38, 1.5, 1.5, -0.75, -1.5, -INF], np.float32).reshape(1, 4, 5)
    f = lambda xp, x: xp.tensordot(xp.broadcast_to(x, (2,) + x.shape), xp.broadcast_to(x, (2,) + x.shape), axes=4)  # noqa: E731
    want, ww = _warnings(f, np, c)
    got, gw = _warnings(f, npc, npc.asarray(c))
    assert gw == ww
