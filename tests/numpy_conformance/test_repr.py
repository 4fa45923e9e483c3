"""repr/str of npc arrays are NumPy's, for every dtype and the printing edge cases."""
import numpy as np
import pytest

import npc
from dtypes import NATIVE

CASES = {
    "zero_d": np.array(3.5),
    "zero_d_int": np.array(-7),
    "empty": np.zeros((0,)),
    "empty_2d": np.zeros((0, 3)),
    "empty_int32": np.zeros((2, 0), np.int32),
    "one_d": np.arange(5),
    "two_d": np.arange(12).reshape(3, 4),
    "three_d": np.arange(24).reshape(2, 3, 4),
    "four_d": np.arange(48.0).reshape(2, 2, 3, 4),
    "long": np.arange(2000),
    "long_2d": np.arange(3000.0).reshape(30, 100),
    "mixed_magnitudes": np.array([1e-10, 1.0, 1e10]),
    "small": np.array([1e-5, 2e-7]),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5]),
    "negative_zero": np.array([-0.0, 0.0, -1.5]),
    "complex": np.array([1 + 2j, -3.5 - 0.25j, np.nan + 1j]),
    "complex64": np.array([1 + 2j, 3j], np.complex64),
    "bool": np.array([True, False, True]),
    "float16": np.array([0.1, 65504, -2], np.float16),
    "float32": np.array([0.1, 1 / 3], np.float32),
    "uint64_big": np.array([2 ** 64 - 1, 0], np.uint64),
    "int8": np.array([-128, 127], np.int8),
    "transposed": np.arange(6.0).reshape(2, 3).T,
    "negative_strides": np.arange(10)[::-3],
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_str_match_numpy(name):
    e = CASES[name]
    a = npc.asarray(e)
    assert repr(a) == repr(e)
    assert str(a) == str(e)


@pytest.mark.parametrize("dt", NATIVE, ids=str)
def test_repr_each_dtype(dt):
    for shape in [(), (3,), (2, 2), (0,)]:
        e = np.ones(shape, dt)
        assert repr(npc.ones(shape, dt)) == repr(e)
        assert str(npc.ones(shape, dt)) == str(e)


def test_printoptions_are_numpys():
    e = np.linspace(0, 1, 7)
    a = npc.asarray(e)
    with np.printoptions(precision=3, suppress=True):
        assert repr(a) == repr(e)
    with npc.printoptions(threshold=5, edgeitems=1):
        assert repr(a) == repr(e) and "..." in repr(a)
    old = npc.get_printoptions()
    try:
        npc.set_printoptions(floatmode="unique", sign="+")
        assert str(a) == str(e)
    finally:
        npc.set_printoptions(**old)
    assert npc.printoptions is np.printoptions and npc.set_printoptions is np.set_printoptions


def test_format():
    assert f"{npc.array(3.14159):.2f}" == f"{np.array(3.14159):.2f}"
    assert format(npc.arange(3)) == format(np.arange(3))
