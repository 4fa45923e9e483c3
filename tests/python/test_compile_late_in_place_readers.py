"""Writes that take their base's buffer over while later kernels still read the old base
away from the stored region (Note [later readers of an in-place base] in
src/fusion/lower_group.cpp): Thomas sweeps whose shared denominator reads the previous row,
and programs whose later reads do meet the region (the Write then keeps a buffer of its
own). Compared with NumPy: values, dtypes, warnings and writes into the arguments, on the
tracing call and on replays, both backends."""
import numpy as np
import pytest

from _compile_diff import BACKENDS, check

FLOATS = [np.float64, np.float32, np.complex128]


def _thomas(a, b, c, d):
    n = b.shape[0]
    cp = np.empty_like(c)
    dp = np.empty_like(d)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    x = np.empty_like(d)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def _thomas_1d(a, b, c, d):
    # Element updates: the shared denominator reads element i - 1.
    n = b.shape[0]
    cp = np.zeros_like(c)
    dp = np.zeros_like(d)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    return cp, dp


def _late_read_meets_region(a):
    # `t` reads the old b[1] and is computed by a kernel after the Write stores b[1].
    b = a * 1.5
    t = b[1] * 2 + b[0]
    b[1] = 5
    return t + b[2], b


def _late_read_of_whole_base(a):
    b = a + 1
    t = b * 2
    b[1:3] = -1
    return t + b


def _late_reads_beside_and_across(a):
    b = a - 0.5
    left = b[:, 0] * 2  # away from the region
    across = b[1] + 1  # the stored row itself
    b[1, :] = 7
    return left + b[0], across * b[2], b


def _two_writes_then_old_read(a):
    b = a * 3
    t = b[0] + b[3]
    b[1] = 1
    b[2] = 2  # a second Write into the same buffer before the old value is read
    return t * b[1], b


def _data(dtype, shape, seed, offset=0.0):
    rng = np.random.default_rng(seed)
    x = rng.random(shape) + offset
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.random(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_thomas_rows(dtype, backend):
    args = tuple(_data(dtype, (9, 7), s, off) for s, off in ((0, 0.0), (1, 4.0), (2, 0.0), (3, 0.0)))
    other = tuple(_data(dtype, (9, 7), s, off) for s, off in ((4, 0.0), (5, 4.0), (6, 0.0), (7, 0.0)))
    check(_thomas, args, args, other, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_thomas_elements(dtype, backend):
    args = tuple(_data(dtype, 12, s, off) for s, off in ((0, 0.0), (1, 4.0), (2, 0.0), (3, 0.0)))
    check(_thomas_1d, args, args, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_thomas_with_zero_denominators(backend):
    # Division by zero mid-sweep: NumPy's warnings, inf and nan propagate the same way.
    a = np.ones((6, 3))
    b = np.ones((6, 3))
    c = np.ones((6, 3))
    d = np.arange(18.0).reshape(6, 3)
    check(_thomas, (a, b, c, d), (a, b, c, d), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [_late_read_meets_region, _late_read_of_whole_base, _late_reads_beside_and_across,
                               _two_writes_then_old_read])
def test_later_reads_that_meet_the_region_see_the_old_values(f, backend):
    a = np.arange(20.0).reshape(4, 5)
    check(f, (a,), (a,), (a[::-1].copy(),), backend=backend)
