"""ndarray.fill converts its value as NumPy does (PyArray_FillWithScalar packs the value as an
element assignment `a[i] = value` would, then copies it): ComplexWarning for complex scalars and
0-d arrays into real dtypes, int() of float scalars into signed integers (ValueError for NaN,
OverflowError out of range), C casts of 0-d arrays ("invalid value encountered in cast"),
"setting an array element with a sequence" for 1-element arrays. Eager npc and compiled code
(both backends) against NumPy: values, exceptions and warnings."""
import warnings

import numpy as np
import pytest

import npc

DTYPES = ["bool", "int8", "uint8", "int16", "int64", "uint32", "uint64", "float16", "float32", "float64", "complex64"]
VALUES = [np.complex128(300 + 1j), np.complex128(complex("nan+1j")), np.complex64(2.5 + 1j), np.array(300.5),
          np.array(np.nan), np.array(-1), np.array(300), np.array([5]), np.array([[5]]), np.float16(2.5),
          np.float32(-1.5), np.int8(-1), np.uint64(2**63), np.longdouble(3.5), np.bool_(True), np.array(2.5 + 1j),
          1 + 2j, 2.5, float("nan"), 300, -1, 2**70, True, np.float64(300.5), np.float64(np.nan), np.float32(np.inf),
          np.int64(300), np.array(1 + 2j, np.complex64), np.array([1 + 2j])]


def _outcome(fn, a, v):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(a, v)
            r = repr((np.asarray(r).tolist(), np.asarray(a).tolist()))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            r = (type(e).__name__, str(e))
    return r, [(x.category.__name__, str(x.message)) for x in w]


def _fill(a, v):
    a.fill(v)
    return a


@pytest.mark.parametrize("dtype", DTYPES)
def test_eager_fill_converts_as_numpy(dtype):
    for v in VALUES:
        for n in (2, 0):
            want = _outcome(_fill, np.zeros(n, dtype), v)
            got = _outcome(_fill, npc.zeros(n, dtype=dtype), npc.asarray(v) if isinstance(v, np.ndarray) else v)
            assert got == want, (v, n)


def _fill_then_use(a, v):
    a.fill(v)
    return a * 1


def _fill_computed(a, b):
    v = np.minimum(b, 2 - 1j)  # fuzzer seed 1100173: a complex value computed in the function
    a.fill(v)
    return a


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "bool", "float32", "complex64"])
def test_compiled_fill_converts_as_numpy(dtype, backend):
    for v in [np.complex128(300 + 1j), np.complex64(2.5 + 1j), np.array(300.5), np.array(np.nan), np.array([5]),
              np.float32(-1.5), np.uint64(2**63), np.float64(300.5), np.float64(np.nan), 2.5, 300]:
        for fn in (_fill_then_use, _fill_computed):
            npc.compiler.reset()
            cf = npc.compile(fn, backend=backend)
            want = _outcome(fn, np.zeros(2, dtype), v)
            for call in range(2):  # trace, replay
                assert _outcome(cf, np.zeros(2, dtype), v) == want, (fn.__name__, v, call)
