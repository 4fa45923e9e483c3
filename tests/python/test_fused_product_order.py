"""Fused float and complex products over several axes multiply in NumPy's order: the order of
the operand's strides (Note [products in memory order] in src/fusion/lower_reduce.cpp), so
np.prod of an F-ordered, transposed or sliced argument equals NumPy's bit for bit."""
import numpy as np
import pytest

import npc

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _layouts(a):
    yield "C", a
    yield "F", np.asfortranarray(a)
    yield "F_slice", np.asfortranarray(a)[::2, 1:]
    yield "reversed_F", np.asfortranarray(a)[::-1]
    yield "3d_transposed", np.ascontiguousarray(np.stack([a, a * 1.5, a * 0.75])).transpose(2, 0, 1)
    yield "3d_swapped", np.ascontiguousarray(np.stack([a, a * 1.25])).transpose(1, 0, 2)


AXES = [None, (0, 1), (-2, -1), (1, 0), (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_prod_over_several_axes_in_numpy_order(dtype, backend):
    rng = np.random.default_rng(7)
    a = rng.random((7, 9)) + 0.5
    if np.dtype(dtype).kind == "c":
        a = a + 1j * (rng.random((7, 9)) - 0.5)
    a = a.astype(dtype)
    for name, x in _layouts(a):
        for axis in AXES:
            if axis is not None and not all(-x.ndim <= ax < x.ndim for ax in axis):
                continue
            if axis is not None and len({ax % x.ndim for ax in axis}) != len(axis):
                continue

            def f(v):
                return np.prod(v, axis=axis), v.prod(axis=axis, keepdims=True)

            cf = npc.compile(f, backend=backend)
            want = f(x)
            for call in range(2):  # trace, replay
                got = cf(x)
                for w, g in zip(want, got):
                    assert g.dtype == w.dtype
                    np.testing.assert_array_equal(g, w, err_msg=f"{name} axis={axis} call {call}")
