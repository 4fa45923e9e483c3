"""Products take NumPy's paths (Note [NumPy's product paths] in src/ops/matmul.cpp) and
report the floating-point flags NumPy reads after them (Note [product FP errors] in
python/npc/_linalg.py): the same bits, the same warnings, eagerly and compiled (both
backends). Many of these programs are differential fuzzer findings (tests/fuzz)."""
import warnings

import numpy as np
import pytest

import npc

nan, inf = float("nan"), float("inf")
MODES = ["npc", "fused", "eager"]


def outcome(fn, args):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, sorted((w.category.__name__, str(w.message)) for w in rec)


def same_bits(got, want, nan_signs=True):
    """`nan_signs`: the signs of NaN real parts compared too (NumPy leaves the sign of a NaN
    made from infinities to the instructions its loop runs, so programs that make many are
    compared without)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    sign = np.signbit(got.real) == np.signbit(want.real)
    if not nan_signs:
        sign |= np.isnan(got.real)
    assert got.tobytes() == want.tobytes() or np.array_equal(got, want, equal_nan=True) and sign.all(), (got, want)
    if got.dtype.kind == "c":  # equal_nan takes nan+infj for nan+nanj: the parts one at a time
        assert np.array_equal(got.imag, want.imag, equal_nan=True), (got, want)


def check(src, args, mode, nan_signs=True):
    env = {"np": np}
    exec(src, env)
    want, wwarn = outcome(env["f"], [a.copy() for a in args])
    env = {"np": npc if mode == "npc" else np}
    exec(src, env)
    f = env["f"]
    if mode == "npc":
        got, gwarn = outcome(f, [npc.asarray(a.copy()) for a in args])
    else:
        got, gwarn = outcome(npc.compile(f, backend=mode), [a.copy() for a in args])
    assert gwarn == wwarn
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            same_bits(g, w, nan_signs)
    else:
        same_bits(got, want, nan_signs)


C64 = np.array([3.5 + 3j, -2.5, 1j, -1 - 3.5j, -2j, complex(-3.4028234663852886e38, inf), complex(3.4028234663852886e38, 1),
                1j, 0.5 - 1j, -2 - 2.5j, 2 + 2j, -2.5 - 2.5j, 0.5 - 0.5j, -3 + 3.5j, -3 + 2.5j, complex(inf, 0), 0j,
                2.5 - 0.5j, -1 - 3j, complex(0, nan), complex(1.1754943508222875e-38, -0.0), 0j, -3 - 2j, 1 + 2.5j,
                complex(nan, nan)], np.complex64).reshape(5, 5)


@pytest.mark.parametrize("mode", MODES)
def test_one_element_operands_multiply(mode):
    # numpy.dot of two one-element operands is one complex multiply (NumPy's formula: no
    # NaN recovery), not a BLAS dot: inf+nanj, "invalid value encountered in dot".
    src = """
def f(a0):
    v1 = np.nanmax(a0, axis=None, keepdims=True)
    return np.tensordot(v1, v1, axes=2)
"""
    check(src, [C64], mode)


@pytest.mark.parametrize("mode", MODES)
def test_inner_of_one_element_matrices_raises_no_flag(mode):
    # (-inf+3j) * (-inf+3j) = inf-infj: NumPy computes the parts one at a time, so nothing
    # is invalid (a packed product's unused lane computed -inf - -inf).
    src = """
def f(a0):
    v2 = np.nansum(a0, axis=-2, keepdims=True)
    return np.inner(v2, v2)
"""
    check(src, [np.array([[1.5 - 4j], [3 + 3j], [-0.5 + 3j], [complex(-inf, 1)]])], mode)


@pytest.mark.parametrize("mode", MODES)
def test_overflow_in_a_vector_dot_is_reported(mode):
    # An input holds inf, and the dot also overflows: NumPy's flags say "overflow".
    src = """
def f(a0):
    v5 = a0[None, None, ::-1]
    return np.tensordot(v5, v5, axes=5)
"""
    a = np.array([1 - 1j, -4 - 2j, complex(-1.401298464324817e-45, 1), 3.5 - 2.5j, 3 + 2j, complex(-3.4028234663852886e38, 1),
                  2.5 + 0.5j, -4 - 3.5j, -3 - 2j, -3.5 - 3j, 3 + 3.5j, -0.5 + 3.5j, -1.5 + 4j, complex(-0.0, nan),
                  complex(nan, 0), complex(1, inf), -1 - 4j, 2.5 + 2.5j, complex(1, nan), -3 + 0.5j], np.complex64)
    check(src, [a.reshape(1, 5, 4)], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_matrix_times_its_transpose(mode, dtype):
    # NumPy's matmul and dot take syrk for A @ A.T of one buffer (and copy the upper triangle).
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((7, 5)) * 1e3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((7, 5)).astype(dtype)
    src = """
def f(a):
    return a @ a.T, np.dot(a, a.T), np.inner(a, a), a.T @ a
"""
    check(src, [a], mode)


@pytest.mark.parametrize("mode", MODES)
def test_signs_of_zeros(mode):
    # The vector dot sums in double from 0.0; a one-element operand scales through axpy into
    # zeros: -0.0 results become +0.0 as in NumPy.
    src = """
def f(v, m, one):
    return np.dot(v, v), v @ v, np.dot(m, one), np.inner(v, v), np.dot(one, one)
"""
    v = np.array([-0.0, 1e-320, -0.0], np.float32)
    check(src, [v, np.array([[-0.0], [2.0]]), np.array([1.0])], mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_dot_of_more_dimensions_sums_each_pair(dtype, mode):
    # numpy.dot of a 3-D operand runs its dot loop per output element (a plain loop for
    # negative strides), not one matrix product; compiled too (Note [N-D dot in traces] in
    # python/npc/csrc/bind_linalg.cpp).
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 6)).astype(dtype)[:, ::-1, ::-1]
    b = rng.standard_normal((6, 5)).astype(dtype) * 1e8
    src = """
def f(a, b):
    return np.dot(a, b), np.dot(a, b[:, 0]), np.inner(a, b.T)
"""
    check(src, [a, b], mode)


# Complex values whose products are nan+infj in one product order and nan+nanj in another.
SPECIAL_C = np.array([complex(-inf, -inf), complex(-inf, inf), complex(inf, -inf), complex(inf, inf), complex(nan, 1),
                      complex(1, nan), complex(inf, 0), complex(0, -inf), 0j, complex(-0.0, 2), 1.5 - 2j, complex(nan, inf)])


def _special(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return rng.choice(SPECIAL_C, size=shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_inner_and_dot_of_more_dimensions_with_special_values(mode, dtype):
    # np.inner / np.dot with an operand of more than two dimensions are one vector dot per
    # output element in NumPy; a traced one ran as a 2-D matmul of the reshaped operands
    # (nan+nanj where NumPy gives nan+infj). Fuzzer seed 500023: the inner of a (1, 4, 1)
    # array with itself, after `a[::-1, ..., -1::-2] *= inf`.
    src = """
def f(a, b, c, d, e):
    a1 = a * 1
    return (np.inner(a, b), np.inner(b, a), np.inner(a, a), np.inner(a1, b), np.dot(a, c), np.dot(b, c),
            np.dot(a, c[0, :, 0]), np.dot(a[:, ::-1], d), np.inner(e, e), np.inner(a[..., ::-2], e[..., ::-1]))
"""
    a, b, c = _special((2, 3, 4), dtype, 1), _special((5, 4), dtype, 2), _special((2, 4, 3), dtype, 3)
    d, e = _special((4,), dtype, 4), _special((1, 4, 1), dtype, 5)
    e[::-1, ..., -1::-2] *= inf
    check(src, [a, b, c, d, _special((1, 4, 2), dtype, 6)], mode, nan_signs=False)
    check("def f(a):\n    a[::-1, ..., -1::-2] *= float('inf')\n    return np.inner(a, a)\n",
          [np.array([-3 - 3.5j, -2.5 + 3.5j, 1.5 - 3.5j, 2.5 + 4j], dtype).reshape(1, 4, 1)], mode)


@pytest.mark.parametrize("mode", MODES)
def test_product_flags_are_the_calling_threads(mode):
    src = """
def f(a, b):
    return a @ b, np.dot(a, b), np.matmul(a[0], b[:, 0]), np.inner(a, b.T)
"""
    a = np.array([[1e300, 1e300], [np.inf, 0.0]])
    b = np.array([[1e300, 0.0], [1e300, 1.0]])
    check(src, [a, b], mode)


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_reduction_of_a_0d_array_starts_from_the_identity(backend):
    # NumPy reduces a 0-d array from the identity: 1 * (nan-infj) is nan+nanj ("invalid value
    # encountered in reduce"), 0 + -0.0 is 0.0.
    src = """
def f(a, b):
    return a.prod(axis=None, keepdims=True), np.sum(b), np.max(b)
"""
    check(src, [np.array(complex(nan, -inf)), np.array(-0.0)], backend)
