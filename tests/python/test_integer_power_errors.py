"""Integer `power` with a negative exponent: NumPy's ValueError, and what NumPy's loop wrote
before it (NumPy raises from inside its loop, after the elements before the first negative
exponent; npc checks the exponents first)."""
import numpy as np
import pytest

import npc


def ipow(a):
    a **= a
    return a


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_negative_exponent_raises_numpys_error(mode):
    a = np.array([5, 2, -1, 3])
    with pytest.raises(ValueError) as want:
        ipow(a.copy())
    b = npc.asarray(a.copy()) if mode == "eager" else a.copy()
    with pytest.raises(ValueError) as got:
        ipow(b) if mode == "eager" else npc.compile(ipow)(b)
    assert str(got.value) == str(want.value)


@pytest.mark.xfail(strict=True, reason="NumPy's integer power loop writes the elements before the first negative "
                                       "exponent, then raises; npc checks every exponent before computing, so the "
                                       "out= array keeps its old values")
def test_elements_before_the_negative_exponent_are_written():
    a = np.array([5, 2, -1, 3])
    want = a.copy()
    with pytest.raises(ValueError):
        ipow(want)
    b = npc.asarray(a.copy())
    with pytest.raises(ValueError):
        ipow(b)
    np.testing.assert_array_equal(np.asarray(b), want)
