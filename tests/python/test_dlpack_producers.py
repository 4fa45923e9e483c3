"""DLPack exchange with another library from PyPI: array-api-strict (in the Makefile's pip
list; a small pure-Python package whose arrays export and import DLPack through NumPy).
PyTorch's test is in test_interop.py and runs where torch is installed; PyTorch, JAX
(jaxlib) and CuPy are too big for the Makefile's pip list."""
import numpy
import pytest

import npc


def test_array_api_strict_round_trip_shares_memory():
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=xp.float32)
    a = npc.from_dlpack(x)
    assert type(a) is npc.ndarray and a.dtype == numpy.float32 and a.shape == (2, 3)
    numpy.testing.assert_array_equal(numpy.asarray(a), [[1, 2, 3], [4, 5, 6]])
    a[0, 0] = 7  # array-api-strict exports writeable memory (through NumPy)
    assert float(x[0, 0]) == 7.0
    b = xp.from_dlpack(npc.arange(4, dtype=npc.int16))
    assert b.dtype == xp.int16 and b.shape == (4,)
    c = npc.arange(5.0)
    d = xp.from_dlpack(c)
    c[1] = -1
    assert float(d[1]) == -1.0
    # Non-contiguous and 0-d arrays cross too.
    e = npc.arange(12).reshape(3, 4)[:, ::2]
    assert xp.from_dlpack(e).shape == (3, 2)
    numpy.testing.assert_array_equal(numpy.asarray(npc.from_dlpack(xp.from_dlpack(e))), numpy.asarray(e))
    assert npc.from_dlpack(xp.asarray(3.5)).shape == ()
