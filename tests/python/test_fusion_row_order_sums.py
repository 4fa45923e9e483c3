"""Sums over the rows of a 2-D array emitted row by row (Note [row-order outer sums] in
src/fusion/lower_reduce.cpp): NumPy's bits, any layout of the operand and the result."""
import numpy as np
import pytest

import npc

SHAPES = [(2, 1), (3, 5), (9, 300), (1000, 37), (257, 513), (8192, 3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "reversed"])
def test_sum_over_rows_is_numpy_bits(dtype, shape, keepdims, layout):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype) * 1e3
    x[0, 0] = -0.0
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "reversed":
        x = x[::-1, ::-1]

    def f(a):
        return a.sum(axis=0, keepdims=keepdims)

    want = f(x)
    for backend in ("fused", "eager"):
        got = np.asarray(npc.compile(f, backend=backend)(x))
        assert got.dtype == want.dtype and got.shape == want.shape
        if layout == "F":
            # NumPy sums a column-contiguous axis pairwise: another order, not the same bits.
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-2)
        else:
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_fused_producer_and_overflow_warning():
    # The rows' producer is inlined into the row loop; overflow warns as NumPy does.
    x = np.full((4, 6), 1e308)
    f = lambda a: (a * 2.0 - a).sum(axis=0)  # noqa: E731
    with pytest.warns(RuntimeWarning, match="overflow"):
        want = f(x)
    with pytest.warns(RuntimeWarning, match="overflow"):
        got = npc.compile(f)(x)
    np.testing.assert_array_equal(np.asarray(got), want)
