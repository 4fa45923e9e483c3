"""Operators that write their result into a temporary operand (Note [temporary elision] in
python/npc/csrc/bind_ops.cpp): values, dtypes and warnings are NumPy's, and no array that
the program can still see is ever written."""
import functools
import operator
import warnings

import numpy
import pytest

import npc

N = 100_000  # 800 KB of float64: above the 256 KiB bound


def _pair(dtype=numpy.float64, n=N, seed=0):
    rng = numpy.random.default_rng(seed)
    a = rng.random(n).astype(dtype)
    if numpy.dtype(dtype).kind == "c":
        a = a + 1j * rng.random(n)
    return a, npc.asarray(a.copy())


def _same(got, ref):
    got = numpy.asarray(got)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    numpy.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.complex128, numpy.int64, numpy.int32])
def test_chains_of_operators(dtype):
    a, A = _pair(dtype)

    def f(x):
        return 3 * (x[:-2] + x[1:-1] + x[2:]) - x[1:-1] * 2

    _same(f(A), f(a))


def test_stencil_in_place_update():
    a, A = _pair()
    b, B = _pair(seed=1)
    for _ in range(3):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    _same(A, a)
    _same(B, b)


def test_named_intermediates_are_not_written():
    a, A = _pair()
    t = A[:-1] + A[1:]
    keep = numpy.asarray(t).copy()
    u = t + A[1:]
    v = -t
    w = 2.0 * t
    _same(t, keep)
    _same(u, keep + a[1:])
    _same(v, -keep)
    _same(w, 2.0 * keep)


def test_temporaries_held_elsewhere_are_not_written():
    a, A = _pair()
    held = [A + 1.0]
    r = held[0] + A
    _same(held[0], a + 1.0)
    _same(r, a + 1.0 + a)
    view = (A * 2.0)[::2]  # the view holds its base, a temporary no longer
    _same(view + 1.0, (a * 2.0)[::2] + 1.0)


def test_results_of_other_dtypes_get_new_arrays():
    a, A = _pair(numpy.float32)
    i, I = _pair(numpy.int32)
    _same((A + A) + numpy.float64(1.5), (a + a) + numpy.float64(1.5))
    _same((I + I) / 3, (i + i) / 3)
    _same((I + I) < 5, (i + i) < 5)
    _same((A * 2) + A[:, None][:4], (a * 2) + a[:, None][:4])


def test_unary_and_reflected_operators():
    a, A = _pair(numpy.complex128)
    _same(-(A * A), -(a * a))
    _same(abs(A * A + A), abs(a * a + a))
    _same(1.5 - (A + A), 1.5 - (a + a))
    _same((A + A) ** 2, (a + a) ** 2)


def test_calls_through_python_and_functions():
    a, A = _pair()
    _same(operator.add(A + A, A), operator.add(a + a, a))
    _same(functools.reduce(operator.mul, [A, A, A]), functools.reduce(operator.mul, [a, a, a]))
    _same(sum([A, A, A]), sum([a, a, a]))
    _same(numpy.add(A + A, A), numpy.add(a + a, a))


def test_floating_point_warnings():
    a = numpy.zeros(N)
    A = npc.asarray(a.copy())
    with warnings.catch_warnings(record=True) as wn:
        warnings.simplefilter("always")
        ref = (a + a) / (a + a)
    with warnings.catch_warnings(record=True) as wc:
        warnings.simplefilter("always")
        got = (A + A) / (A + A)
    _same(got, ref)
    assert [str(w.message) for w in wc] == [str(w.message) for w in wn]
    with numpy.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            (A + A) / (A + A)


def test_read_only_and_broadcast_temporaries():
    a, A = _pair()
    r = A + A
    r.flags.writeable = False
    _same(r + A, a + a + a)
    _same(r, a + a)
    x, y = npc.broadcast_arrays(A + A, A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(x + y, a + a + a)
