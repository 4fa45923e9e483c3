"""The sign bit of a NaN that an operation of the program made, as np.signbit, np.copysign,
np.abs, np.negative and np.heaviside see it, eager and compiled (both backends), against
NumPy (Note [sign bit of a NaN] in include/npc/scalar_rules.hpp).

Fuzz seed 400771: fused np.signbit(a0 / a0) of uint16 zeros was False where NumPy's 0 / 0 is
the hardware's default NaN (sign bit set on x86): GCC folded the signbit of a quotient of
non-negative numbers to false. Only NaNs with a sign that the hardware fixes are used: made
from numbers (0 / 0, inf / inf, inf - inf) or from one NaN operand (-nan * -nan); which of two
different NaN operands an operation passes on is left to the compiler, in NumPy too.
"""
import warnings

import numpy as np
import pytest

import npc
from _compile_diff import BACKENDS, check

nan, inf = float("nan"), float("inf")

PROGRAMS = {
    "signbit of a quotient": lambda a: np.signbit(a / a),
    "copysign from a quotient": lambda a: np.copysign(2.0, a / a),
    "absolute value": lambda a: np.copysign(np.abs(a / a), 2.0),
    "negated absolute value": lambda a: np.copysign(-np.abs(a / a), 2.0),
    "negation of a quotient of a negation": lambda a: np.signbit(-(-a / a)),
    "quotient by a negation": lambda a: np.signbit(a / -a),
    "signbit of a square": lambda a: np.signbit(a * a),
    "copysign from a square": lambda a: np.copysign(3.0, a * a),
    "signbit of a difference": lambda a: np.signbit(-(a - a)),
}


def inputs(dtype):
    if dtype[0] == "u":
        return np.array([2, 2, 1, 0, 0, 3, 0, 7, 0], dtype=dtype)
    return np.array([0.0, -0.0, inf, -inf, 1.0, -2.0, -nan, nan, 0.5], dtype=dtype)


def signs(r):
    """signbit of a boolean or float result, as bools (copysign's results by their sign)."""
    r = np.asarray(r)
    return r if r.dtype == bool else np.signbit(r)


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("dtype", ["uint16", "uint8", "float16", "float32", "float64"])
def test_fused_and_eager(name, dtype):
    f = PROGRAMS[name]
    x = inputs(dtype)
    for backend in BACKENDS:
        check(f, (x,), (x[::-1].copy(),), backend=backend)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(signs(f(npc.asarray(x))), signs(f(x)))


def test_the_fuzzer_program():
    # Seed 400771, shrunk: uint16 ** in a quotient by itself; x86's 0 / 0 is -nan.
    x = np.array([2, 2, 2, 1, 0], dtype=np.uint16)
    for backend in BACKENDS:
        check(lambda a0: np.signbit(a0 / a0), (x,), backend=backend)


CONSTANT_SIGNBIT = {
    "signbit of its absolute value": lambda a: np.signbit(np.abs(a / a)),
    "signbit of a negated absolute value": lambda a: np.signbit(-np.abs(a / a)),
}


@pytest.mark.parametrize("name", CONSTANT_SIGNBIT)
def test_constant_signbit_values(name):
    f = CONSTANT_SIGNBIT[name]
    for dtype in ["uint16", "float16", "float64"]:
        x = inputs(dtype)
        for backend in BACKENDS:
            check(f, (x,), backend=backend, warn=False)


@pytest.mark.xfail(strict=True, reason="fused code: GCC folds np.signbit(np.abs(v)) to False and "
                   "drops the division that made v, with its 'invalid' flag (it does not keep "
                   "floating-point operations for their flags alone)")
def test_constant_signbit_keeps_the_warning_of_its_operand():
    check(CONSTANT_SIGNBIT["signbit of its absolute value"], (inputs("float64"),), backend="fused")


def test_heaviside_of_nan_is_numpys_positive_nan():
    # npy_heaviside returns NPY_NAN for any NaN x (the sign of x is not passed on).
    x = np.array([-nan, nan, -1.0, 0.0, 2.0])
    want = np.signbit(np.heaviside(x, 0.5))
    assert not want[:2].any()
    for dtype in ["float16", "float32", "float64"]:
        y = x.astype(dtype)
        np.testing.assert_array_equal(np.signbit(np.asarray(npc.heaviside(npc.asarray(y), 0.5))), want)
        for backend in BACKENDS:
            check(lambda a: np.signbit(np.heaviside(a, 0.5)), (y,), backend=backend)
