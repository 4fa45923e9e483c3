"""numpy.count_nonzero of a whole array and boolean-mask selection counted eight bytes at a
time (Note [sparse masks] in src/core/indexing.cpp): NumPy's counts and result type for every
length around the 8- and 64-byte blocks, bool bytes other than 0 and 1, NaN and -0.0."""
import numpy
import pytest

import npc

LENGTHS = [0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 1000, 4099]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 1.0])
def test_whole_array_counts(dtype, n, density):
    rng = numpy.random.default_rng(n)
    x = ((rng.random(n) < density) * rng.integers(1, 3, n)).astype(dtype)
    if dtype == "float64" and n > 3:
        x[1], x[2] = numpy.nan, -0.0
    if dtype == "complex128" and n > 1:
        x[0] = 1j
    r, g = numpy.count_nonzero(x), npc.count_nonzero(npc.asarray(x))
    assert type(g) is type(r) and g == r


@pytest.mark.parametrize("n", LENGTHS)
def test_bool_bytes_other_than_one(n):
    raw = numpy.random.default_rng(n).choice(numpy.array([0, 0, 0, 1, 2, 128, 255], numpy.uint8), n)
    b = raw.view(numpy.bool_)
    B = npc.asarray(b)
    assert npc.count_nonzero(B) == numpy.count_nonzero(raw)
    d = numpy.arange(n, dtype=numpy.float64)
    numpy.testing.assert_array_equal(numpy.asarray(npc.asarray(d)[B]), d[raw != 0])


def test_strided_axis_and_keepdims():
    m = numpy.random.default_rng(0).random((30, 70)) < 0.3
    M = npc.asarray(m)
    assert npc.count_nonzero(M[:, ::3]) == numpy.count_nonzero(m[:, ::3])
    numpy.testing.assert_array_equal(numpy.asarray(npc.count_nonzero(M, axis=1)), numpy.count_nonzero(m, axis=1))
    numpy.testing.assert_array_equal(numpy.asarray(npc.count_nonzero(M, keepdims=True)),
                                     numpy.count_nonzero(m, keepdims=True))
