"""Writes whose value reads the written array where the write stores (Note [values of unsafe
in-place writes] in src/fusion/lower_group.cpp): the fused backend computes the value into a
temporary of the region's size first and then stores it into the array in place, as NumPy
does; the results must be NumPy's whatever the overlap (forward and backward shifts,
reversed and strided regions, casts, element updates between row updates), on both backends,
on the tracing call and on replays."""
import numpy as np
import pytest

from _compile_diff import BACKENDS, check


def _row_shift_left(a):
    a = a.copy()
    a[2, 1:-1] = a[2, :-2] + a[2, 2:]
    return a


def _row_loop(a):
    # Seidel's row update followed by element updates that read the new row.
    a = a.copy()
    n = a.shape[0]
    for i in range(1, n - 1):
        a[i, 1:-1] = a[i - 1, :-2] + a[i, 2:] + a[i + 1, 1:-1] + a[i, :-2]
        for j in range(1, n - 1):
            a[i, j] = (a[i, j] + a[i, j - 1]) / 9.0
    return a


def _shift_right_1d(a):
    a = a.copy()
    a[1:] = a[:-1] * 2
    return a


def _shift_left_1d(a):
    a = a.copy()
    a[:-1] = a[1:] - a[:-1]
    return a


def _plain_overlapping_copy(a):
    a = a.copy()
    a[1:] = a[:-1]
    return a


def _reversed_region(a):
    a = a.copy()
    a[1:-1] = a[::-1][1:-1] + 1
    return a


def _strided_region(a):
    a = a.copy()
    a[::2] = a[1::2][: a[::2].shape[0]] * 3 if a.shape[0] % 2 == 0 else a[::2] * 3
    return a


def _interior_2d(a):
    # Jacobi written in place: every neighbour read overlaps the stored interior.
    a = a.copy()
    for _ in range(3):
        a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return a


def _column_update(a):
    a = a.copy()
    for j in range(1, a.shape[1]):
        a[:, j] = a[:, j - 1] * 0.5 + a[::-1, j]
    return a


def _cast_in_value(a):
    b = (a * 10).astype(np.int64)
    b[1:, 1:] = b[:-1, :-1] * 1.5
    return b


def _read_after_write(a):
    a = a.copy()
    a[1, :] = a[0, :] + a[1, ::-1]
    return a, a[1].sum(), a[0, 0] + a[1, 0]


def _argument_written(a):
    a[2, 1:-1] = a[2, 2:] * a[1, 1:-1] + a[2, :-2]
    return a.sum()


CASES = [_row_shift_left, _row_loop, _interior_2d, _column_update, _cast_in_value, _read_after_write,
         _argument_written]
CASES_1D = [_shift_right_1d, _shift_left_1d, _plain_overlapping_copy, _reversed_region, _strided_region]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_unsafe_in_place_writes_2d(f, backend):
    rng = np.random.default_rng(0)
    a = rng.random((6, 7))
    check(f, (a,), (a,), (rng.random((6, 7)),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", CASES_1D, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [2, 9, 10])
def test_unsafe_in_place_writes_1d(f, n, backend):
    rng = np.random.default_rng(1)
    a = rng.random(n)
    check(f, (a,), (a,), (rng.random(n),), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.complex128, np.bool_])
def test_unsafe_in_place_writes_dtypes(dtype, backend):
    rng = np.random.default_rng(2)
    a = (rng.random((5, 6)) * 50).astype(dtype)

    def f(x):
        x = x.copy()
        for i in range(1, x.shape[0]):
            x[i, 1:] = x[i, :-1] + x[i - 1, 1:]
        return x

    check(f, (a,), (a,), backend=backend, warn=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unsafe_in_place_write_of_a_view_argument(backend):
    # The written array is a view of the argument: the caller's array sees the writes.
    rng = np.random.default_rng(3)

    def f(x):
        v = x[1:, ::-1]
        v[0, 1:] = v[0, :-1] + v[1, 1:]
        return v.sum()

    check(f, (rng.random((4, 5)),), (rng.random((4, 5)),), backend=backend)
