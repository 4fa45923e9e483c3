"""Generator draws with out= an array the compiled function made (Note [draws into traced
arrays] in python/npc/compiler/_capture.py): NumPy's values in out, out returned, the stream
moved as NumPy moves it, on the tracing call and on replays; NumPy's errors for an out of
another dtype, a strided or read-only out, or a size that does not match."""
import numpy as np
import pytest

from _compile_diff import BACKENDS, check


def _fill(A):
    B = A.copy()
    rng = np.random.default_rng(1)
    r = rng.standard_normal(out=B)
    return B, r is B, rng.random()


def _f_order(A):
    B = np.empty((3, 4), order="F")
    rng = np.random.default_rng(2)
    rng.random(out=B)
    return B + A[0, 0], B.flags.f_contiguous


def _float32(A):
    B = np.zeros(5, np.float32)
    rng = np.random.default_rng(3)
    rng.standard_exponential(dtype=np.float32, out=B)
    return B * A.sum()


def _in_a_loop(A):
    B = np.empty_like(A)
    rng = np.random.default_rng(4)
    total = 0.0
    for _ in range(3):
        rng.standard_normal(out=B)
        total = total + B.sum()
    return total


def _by_position(A):
    B = np.empty(5)
    rng = np.random.default_rng(9)
    rng.random(None, np.float64, B)
    rng.standard_gamma(2.0, out=B[:3])
    return B * A[0, 1]


def _wrong_dtype(A):
    B = np.zeros(3, np.float32)
    return np.random.default_rng(5).standard_normal(out=B)


def _strided(A):
    B = np.zeros((4, 6))[:, ::2]
    return np.random.default_rng(6).random(out=B)


def _read_only(A):
    B = np.broadcast_to(A[0, :1], (4,))
    return np.random.default_rng(7).random(out=B)


def _size_mismatch(A):
    B = A * 0
    return np.random.default_rng(8).standard_normal(size=(2, 2), out=B)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_fill, _f_order, _float32, _in_a_loop, _by_position, _wrong_dtype, _strided,
                                _read_only, _size_mismatch])
def test_draws_into_arrays_of_the_function(fn, backend):
    A = np.arange(12.0).reshape(3, 4)
    check(fn, (A,), (A + 1,), backend=backend)
