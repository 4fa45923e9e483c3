"""A NumPy scalar or 0-d NumPy array on the left of an operator with an npc array reaches npc
through NumPy's ufunc override as a 0-d array: a strong operand (NEP 50), as NumPy has it."""
import operator
import warnings

import numpy
import pytest

import npc

SCALARS = [numpy.float64(0.3), numpy.float32(0.3), numpy.float16(2), numpy.int8(-3), numpy.uint8(200),
           numpy.int64(7), numpy.bool_(True), numpy.complex64(1 - 2j), numpy.array(0.5),
           numpy.array(3, dtype=numpy.int16), numpy.array(True)]
ARRAYS = [numpy.linspace(-2, 2, 9), numpy.arange(9, dtype=numpy.int32), numpy.arange(9, dtype=numpy.uint8),
          numpy.linspace(0, 1, 9).astype(numpy.float32), numpy.arange(9) % 2 == 0]
OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.le, operator.lt, operator.eq,
       operator.ge, operator.and_]


@pytest.mark.parametrize("s", SCALARS, ids=lambda s: f"{type(s).__name__}-{numpy.asarray(s).dtype}")
@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: str(a.dtype))
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_numpy_scalar_on_the_left(s, a, op):
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        try:
            ref = op(s, a)
        except Exception as e:  # noqa: BLE001
            ref = e
    with warnings.catch_warnings(record=True) as wc:
        warnings.simplefilter("always")
        if isinstance(ref, Exception):
            with pytest.raises(type(ref)):
                op(s, npc.asarray(a))
            return
        got = op(s, npc.asarray(a))
    assert isinstance(got, npc.ndarray)
    got = numpy.asarray(got)
    assert got.dtype == ref.dtype
    numpy.testing.assert_array_equal(got, ref)
    assert [w.category for w in wc] == [w.category for w in wn]
