"""Compiled complex sums against NumPy's pairwise sums (Note [complex64 sums] in
src/fusion/lower_reduce.cpp): long complex64 sums accumulate in complex128, so they stay
within a few float32 ULPs of NumPy's result at any length and thread count; short static
ones keep a running sum, NumPy's order below four elements."""
import numpy as np
import pytest

import npc


def _sum(z):
    return z.sum()


def _sum_of_sum(z, w):
    return (z + w).sum()


def _mean(z, w):
    return (z * w).mean()


def _where_sum(z, w):
    return np.where(z.real > 0, z, w).sum()


def _initial(z):
    return np.add.reduce(z, initial=np.complex64(3 - 1j))


def _rows(z):
    return z.reshape(100, -1).sum(axis=1)


def _strided(z):
    return z[::-3].sum()


CASES = [(_sum, 1), (_sum_of_sum, 2), (_mean, 2), (_where_sum, 2), (_initial, 1), (_rows, 1), (_strided, 1)]


@pytest.fixture
def threads():
    """Restores npc's thread settings after a test that changes them."""
    old = npc.get_parallel_threshold(), npc.get_num_threads()
    yield
    npc.set_parallel_threshold(old[0])
    npc.set_num_threads(old[1])


def _operands(n, k, constant):
    r = np.random.default_rng(n)
    if constant:  # the case a running sum gets worst: every element the same
        return tuple(np.full(n, 0.1 + 0.1j, np.complex64) for _ in range(k))
    return tuple((r.standard_normal(n) + 1j * r.standard_normal(n)).astype(np.complex64) + 0.5 for _ in range(k))


@pytest.mark.parametrize("fn,k", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("n", [300_000, 1_100_000])
@pytest.mark.parametrize("constant", [True, False], ids=["constant", "random"])
@pytest.mark.parametrize("setting", ["default", "team", "one-thread"])
def test_long_complex64_sums(fn, k, n, constant, setting, threads):
    if setting == "team":
        npc.set_parallel_threshold(1)
    elif setting == "one-thread":
        npc.set_num_threads(1)
    args = _operands(n, k, constant)
    want = fn(*args)
    f = npc.compile(fn, backend="fused")
    for _ in range(2):  # trace, replay
        got = np.asarray(f(*args))
        assert got.dtype == want.dtype and got.shape == np.shape(want)
        # NumPy's own pairwise sum is within a few ULPs of the exact one; a running complex64
        # sum was 1e-4 to 3e-2 off at these lengths.
        scale = np.abs(np.asarray(want)).max()
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 * scale)


@pytest.mark.parametrize("n", [1, 3, 7, 8, 100, 256])
def test_short_complex64_sums_keep_numpys_bits(n):
    z = (np.arange(n) * (0.1 + 0.3j) + (1 / 3 - 1j / 7)).astype(np.complex64)
    want = _sum(z)
    f = npc.compile(_sum, backend="fused")
    for _ in range(2):
        got = f(z)
        assert np.asarray(got).dtype == np.complex64
        if n < 4:  # NumPy's pairwise sum of fewer than 8 floats is a running sum, as here
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_complex128_sums_stay_close():
    z = np.full(1_100_000, 0.1 + 0.1j)
    f = npc.compile(_sum, backend="fused")
    for _ in range(2):
        np.testing.assert_allclose(f(z), z.sum(), rtol=1e-10)


def _axis0(z):
    return z.sum(axis=0)


@pytest.mark.parametrize("shape", [(1_100_000, 2), (1000, 3)])
def test_outer_axis_sums_are_numpys_running_sums(shape):
    """A sum over outer axes only is NumPy's running sum row by row in complex64: the same
    bits, error and all (np.full((1_100_000, 2), 0.1 + 0.1j) sums to 111114.59 in NumPy)."""
    z = np.full(shape, 0.1 + 0.1j, np.complex64) + np.arange(shape[1], dtype=np.complex64)
    want = _axis0(z)
    f = npc.compile(_axis0, backend="fused")
    for _ in range(2):
        np.testing.assert_array_equal(f(z), want)


@pytest.mark.parametrize("make", [lambda z: z.reshape(550_000, 2), lambda z: z.reshape(2, 550_000).T,
                                  lambda z: np.asfortranarray(z.reshape(100_000, 11)),
                                  lambda z: z.reshape(100_000, 11)[:, ::2]],
                         ids=["short-rows", "transposed", "F-ordered", "strided"])
def test_full_sums_of_short_rows(make):
    """The elements per output count, not the last axis alone: a full sum of a (550000, 2)
    array is long although its last axis is short."""
    z = make(np.full(1_100_000, 0.1 + 0.1j, np.complex64))
    want = _sum(z)
    f = npc.compile(_sum, backend="fused")
    for _ in range(2):
        np.testing.assert_allclose(f(z), want, rtol=2e-6)


@pytest.mark.xfail(strict=True, reason="Note [complex64 sums]: the complex128 accumulator does not overflow "
                   "where NumPy's pairwise order does (NumPy: nan with overflow and invalid warnings; npc: 0j)")
def test_partial_sum_overflow_as_numpy():
    z = np.zeros(300, np.complex64)
    z[:4] = [3e38, 3e38, -3e38, -3e38]
    with np.errstate(all="ignore"):
        want = _sum(z)
    f = npc.compile(_sum, backend="fused")
    with np.errstate(all="ignore"):
        got = f(z)
    np.testing.assert_array_equal(got, want)


@pytest.mark.xfail(strict=True, reason="Note [complex64 sums]: a sum of a runtime count is widened at any "
                   "length, so three elements round once where NumPy's running sum rounds twice")
def test_short_sum_of_a_runtime_count_as_numpy():
    f = npc.compile(_sum, backend="fused", dynamic=True)
    f(np.zeros(300, np.complex64))
    z = np.array([1, 2**-24, 2**-24], np.complex64)
    assert f(z) == _sum(z)
