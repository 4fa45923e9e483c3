"""NumPy's scalar integer arithmetic warns where its ufunc loops wrap silently: np.int8(100) * 2
gives int8 -56 with "overflow encountered in scalar multiply" (also add, subtract, unary
negative and abs()), while the same operation on arrays or 0-d arrays warns nothing (Note
[integer scalar overflow] in include/npc/scalar_rules.hpp). Compiled code traces those
scalars as 0-d values marked as scalar arithmetic (Note [scalar math] in
src/tracer/trace.hpp): both backends warn as NumPy on the tracing call and on replays, and
under numpy.errstate."""
import itertools

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, assert_same_as_numpy, check, outcome


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-scalar-overflow")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def _pair(x, y):
    return np.array([x]), np.array([y])


CASES = {
    "multiply_python_int": (lambda a, b: a[0] * 2, _pair(np.int8(100), np.int8(1))),
    "multiply": (lambda a, b: a[0] * b[0], _pair(np.int8(100), np.int8(2))),
    "add_unsigned": (lambda a, b: a[0] + b[0], _pair(np.uint8(200), np.uint8(100))),
    "subtract_unsigned": (lambda a, b: a[0] - b[0], _pair(np.uint8(1), np.uint8(2))),
    "subtract_signed": (lambda a, b: a[0] - b[0], _pair(np.int16(-30000), np.int16(30000))),
    "negative_min": (lambda a, b: -a[0], _pair(np.int8(-128), np.int8(0))),
    "negative_unsigned": (lambda a, b: -a[0], _pair(np.uint8(1), np.uint8(0))),
    "absolute_min": (lambda a, b: abs(a[0]), _pair(np.int32(-2 ** 31), np.int32(0))),
    "multiply_int64": (lambda a, b: a[0] * b[0], _pair(np.int64(2 ** 62), np.int64(4))),
    "multiply_int64_min_by_minus_one": (lambda a, b: a[0] * b[0], _pair(np.int64(-2 ** 63), np.int64(-1))),
    "multiply_uint64": (lambda a, b: a[0] * b[0], _pair(np.uint64(2 ** 63), np.uint64(2))),
    "mixed_types": (lambda a, b: a[0] * b[0], (np.array([100], np.int8), np.array([400], np.int16))),
    "sum_plus_python_int": (lambda a, b: a.sum(dtype=np.int8) + 100, _pair(np.int8(100), np.int8(0))),
    "two_overflows": (lambda a, b: a[0] * b[0] + a[0] * 3, _pair(np.int8(100), np.int8(2))),
    "same_product_twice": (lambda a, b: (a[0] * 2, a[0] * 2), _pair(np.int8(100), np.int8(0))),
    "loop": (lambda a, b: _loop(a[0]), _pair(np.int8(3), np.int8(0))),
    "in_place_scalar": (lambda a, b: _inplace(a[0]), _pair(np.int8(100), np.int8(0))),
    # not scalar arithmetic: arrays, 0-d arrays and ufunc calls wrap silently
    "array": (lambda a, b: a * b, _pair(np.int8(100), np.int8(2))),
    "zero_d_array": (lambda a, b: a.reshape(()) * b.reshape(()), _pair(np.int8(100), np.int8(2))),
    "ufunc_of_scalars": (lambda a, b: np.multiply(a[0], b[0]), _pair(np.int8(100), np.int8(2))),
    "no_overflow": (lambda a, b: a[0] * b[0] - 100, _pair(np.int8(63), np.int8(2))),
    "bool_scalars": (lambda a, b: a[0] + b[0], _pair(np.True_, np.True_)),
}


def _loop(s):
    for _ in range(4):
        s = s * 4
    return s


def _inplace(s):
    s += 100
    return s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_scalar_overflow_warns_as_numpy(name, backend):
    f, args = CASES[name]
    check(f, args, args, args, backend=backend)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_npc(name):
    f, args = CASES[name]
    got = outcome(lambda *a: f(*[npc.asarray(x) for x in a]), args)
    want = outcome(f, args)
    assert got[1] == want[1]
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("state", ["raise", "ignore", "warn"])
def test_errstate(backend, state):
    f, args = CASES["multiply"]
    compiler.reset()
    cf = npc.compile(f, backend=backend)
    for _ in range(2):
        with np.errstate(over=state):
            assert_same_as_numpy(cf, f, *args)


def _bounds(dt):
    info = np.iinfo(dt)
    vals = {0, 1, 2, 3, info.max, info.max - 1, info.max // 2, info.max // 2 + 1, int(np.sqrt(info.max)),
            int(np.sqrt(info.max)) + 1}
    if info.min < 0:
        vals |= {-1, -2, info.min, info.min + 1, info.min // 2, info.min // 2 - 1, -int(np.sqrt(info.max)) - 1}
    return sorted(vals)


OPS = {
    "add": lambda a, b: a[0] + b[0],
    "subtract": lambda a, b: a[0] - b[0],
    "multiply": lambda a, b: a[0] * b[0],
    "negative": lambda a, b: -a[0],
    "absolute": lambda a, b: abs(a[0]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("op", sorted(OPS))
def test_boundaries(op, dt, backend):
    """Every pair of boundary values: the overflow checks agree with NumPy's exactly."""
    vals = _bounds(dt)
    pairs = itertools.product(vals, vals if op in ("add", "subtract", "multiply") else [0])
    calls = [(np.array([x], dt), np.array([y], dt)) for x, y in pairs]
    check(OPS[op], *calls, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_int_argument(backend):
    """`a[0] * k` with k an int argument, traced as a runtime int from its second value on
    (Note [runtime ints]): still NumPy's scalar arithmetic on every call."""
    a = np.array([100], np.int8)
    check(lambda a, k: a[0] * k, *[(a, k) for k in (2, 3, 3, 5, 1, 0, 7)], backend=backend)
    check(lambda a, k: k * a[0] + a[0], *[(a, k) for k in (2, 3, 1, 0)], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runtime_float_argument(backend):
    """A float argument is a runtime scalar: `a[0] / x` is scalar arithmetic ("in scalar
    divide", not "in divide")."""
    a = np.array([1.0])
    check(lambda a, x: a[0] / x, *[(a, x) for x in (0.0, 0.0, -0.0, 2.0, 0.0)], backend=backend)
