"""Regressions found by probing new features as a NumPy user would: each test runs the same
expression with NumPy and npc and compares values, dtypes, exception types and messages."""
import warnings

import numpy as np
import pytest

import npc


def outcome(fn, lib):
    """(kind, payload, warnings) of fn(lib): the result as NumPy data or the exception."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            res = ("raise", type(e).__name__, str(e))
        else:
            scalar = not isinstance(r, (np.ndarray, npc.ndarray))
            a = np.asarray(r)
            res = ("value", scalar, a.dtype, a.shape, a.tolist())
    return res, [(x.category, str(x.message)) for x in w]


def check(fn):
    exp = outcome(fn, np)
    got = outcome(fn, npc)
    assert got == exp


# Python ints beyond int64 (and beyond uint64) as weak scalars of ufuncs and operators.
HUGE = [
    lambda m: m.array([1, 2]) < 2 ** 70,
    lambda m: m.array([1, 2]) > -2 ** 70,
    lambda m: m.array([1, 2]) != -2 ** 70,
    lambda m: m.equal(m.array([1, 2]), 2 ** 70),
    lambda m: m.array([1], m.int8) < 2 ** 70,
    lambda m: m.array([1], m.uint8) > -2 ** 70,
    lambda m: m.array([1], m.uint64) < 2 ** 64,
    lambda m: m.array(5) < 2 ** 70,
    lambda m: m.array([1.0]) + 2 ** 70,
    lambda m: m.array([1.0]) * 2 ** 64,
    lambda m: m.array(5.0) + 2 ** 70,
    lambda m: m.array([1.5], m.float32) + 2 ** 70,
    lambda m: m.array([1.5], m.float16) + 2 ** 70,
    lambda m: m.array([1j]) + 2 ** 70,
    lambda m: 2 ** 70 - m.array([1.0]),
    lambda m: m.add(m.array([1.0]), 2 ** 70),
    lambda m: m.maximum(m.array([1.0]), 2 ** 70),
    lambda m: m.array([1.0]) ** 2 ** 70,
    lambda m: m.array([1.0]) + 10 ** 400,
    lambda m: m.array([1]) + 10 ** 400,
    lambda m: m.array([1], m.int64) + 2 ** 70,
    lambda m: m.array([1], m.uint64) + 2 ** 64,
    lambda m: m.array([True]) + 2 ** 70,
    lambda m: m.array([1], m.int16) & 2 ** 70,
    lambda m: m.array([1], m.int64) << 2 ** 70,
    # Between int64 and uint64: signed loops take the int as a C long first.
    lambda m: m.array([1], m.int64) * 2 ** 63,
    lambda m: m.array([1], m.int32) + 2 ** 63,
    lambda m: m.array([1], m.int8) + 2 ** 63,
    lambda m: m.array([True]) + 2 ** 63,
    lambda m: m.array([1], m.int64) + (-2 ** 63 - 1),
    lambda m: m.array([1], m.uint32) + 2 ** 63,
    lambda m: m.array([1], m.uint64) + 2 ** 63,
    lambda m: m.where(True, m.array([1], m.int32), 2 ** 63),
    lambda m: m.where(True, m.array([1], m.int32), 2 ** 40),
]


@pytest.mark.parametrize("fn", HUGE, ids=range(len(HUGE)))
def test_huge_python_ints(fn):
    check(fn)


def test_huge_python_int_inplace():
    for lib in (np, npc):
        a = lib.array([1.0, 2.0])
        a += 2 ** 70
        assert np.asarray(a).tolist() == [1.0 + 2.0 ** 70, 2.0 + 2.0 ** 70]
    a = npc.array([1.0, 2.0])
    b = a
    a += 2 ** 70
    assert a is b and isinstance(a, npc.ndarray)
