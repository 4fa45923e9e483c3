"""Floating-point warnings of complex multiply, divide and sign over special values (zeros,
infinities, NaNs, huge and tiny parts): NumPy's warnings and values, for complex64 and
complex128, eagerly and compiled with both backends (Note [partial vectors of complex64]
and NPK_KEEP_EVALUATED in include/npc/scalar_rules.hpp)."""
import warnings

import numpy as np
import pytest

import npc

nan, inf = float("nan"), float("inf")
PARTS = [0.0, -0.0, 1.5, -2.0, inf, -inf, nan, 1e-45, 3e38]
VALUES = [complex(r, i) for r in PARTS for i in PARTS]
# The compiled modes take every value of the first operand against a few of the second.
SECOND = [complex(inf, nan), complex(-3.5, -2.0), complex(nan, inf), complex(0.0, 1.5),
          complex(3e38, 3e38), complex(-0.0, -inf), complex(1e-45, 0.0)]

OPS = {
    "multiply": lambda x, y: x * y,
    "divide": lambda x, y: x / y,
    "sign": lambda x, y: np.sign(x),
}


def _run(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = f()
    return r, sorted({(x.category.__name__, str(x.message)) for x in w})


def _check(got_f, exp_f):
    exp, wexp = _run(exp_f)
    got, wgot = _run(got_f)
    got = np.asarray(got)
    assert got.dtype == exp.dtype
    np.testing.assert_array_equal(got, exp)
    assert wgot == wexp


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", sorted(OPS))
def test_eager_special_values(op, dtype):
    f = OPS[op]
    seconds = VALUES if op != "sign" else VALUES[:1]
    for a in VALUES:
        x = np.full(3, a, dtype)
        for b in seconds:
            y = np.full(3, b, dtype)
            _check(lambda: f(npc.asarray(x), npc.asarray(y)), lambda: f(x, y))


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", sorted(OPS))
def test_compiled_special_values(op, dtype, backend):
    f = OPS[op]
    cf = npc.compile(f, backend=backend)
    seconds = SECOND if op != "sign" else SECOND[:1]
    for a in VALUES:
        x = np.full(3, a, dtype)
        for b in seconds:
            y = np.full(3, b, dtype)
            _check(lambda: cf(x, y), lambda: f(x, y))


def test_known_cases():
    # (nan+infj) / (-3.5-2j) as complex64: no "invalid" (a stale vector lane computed inf * 0);
    # 0j * (inf+nanj): "invalid" from 0 * inf although the part's result is the NaN operand;
    # sign(3e38+3e38j) as complex64: the modulus overflows.
    cases = [
        (lambda x, y: x / y, complex(nan, inf), complex(-3.5, -2.0), np.complex64, []),
        (lambda x, y: x * y, 0j, complex(inf, nan), np.complex64, ["invalid value encountered in multiply"]),
        (lambda x, y: x * y, 0j, complex(inf, nan), np.complex128, ["invalid value encountered in multiply"]),
        (lambda x, y: np.sign(x), complex(3e38, 3e38), 0j, np.complex64, ["overflow encountered in sign"]),
    ]
    for f, a, b, dtype, expected in cases:
        x, y = np.full(3, a, dtype), np.full(3, b, dtype)
        _, w = _run(lambda: f(x, y))
        assert [m for _, m in w] == expected  # NumPy itself, on this machine
        for g in (lambda: f(npc.asarray(x), npc.asarray(y)), lambda: npc.compile(f)(x, y)):
            _, wg = _run(g)
            assert [m for _, m in wg] == expected


def _nan(payload, negative, dtype):
    if dtype == np.complex64:
        bits = np.uint32((0xFF800000 if negative else 0x7F800000) | 0x400000 | payload)
        return bits.view(np.float32)
    bits = np.uint64((0xFFF0000000000000 if negative else 0x7FF0000000000000) | (1 << 51) | payload)
    return bits.view(np.float64)


@pytest.mark.parametrize("operands", [
    "arrays",
    "scalar second",
    pytest.param("scalar first", marks=pytest.mark.xfail(
        strict=True, reason="NumPy's complex product of a broadcast first operand raises "
        "'invalid' where neither its SIMD formula nor the plain product does "
        "((inf-infj) * (nan+1.5j)); npc computes NumPy's SIMD formula there")),
])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_product_loop_values_and_nans(dtype, operands):
    # The contiguous product loop (Note [complex product loops]): every length's tail, scalar
    # operands on either side, NaNs of both signs, infinities and signed zeros in every part.
    rng = np.random.default_rng(5)
    real = np.float32 if dtype == np.complex64 else np.float64
    view = np.uint32 if dtype == np.complex64 else np.uint64
    parts = [real(0.0), real(-0.0), real(1.5), real(-2.5), real(np.inf), real(-np.inf),
             _nan(1, False, dtype), _nan(2, True, dtype), _nan(3, False, dtype), _nan(4, True, dtype)]
    for n in list(range(1, 10)) + [33]:
        for _ in range(20):
            a = np.empty(n, dtype)
            b = np.empty(n, dtype)
            a.real, a.imag = rng.choice(parts, n), rng.choice(parts, n)
            b.real, b.imag = rng.choice(parts, n), rng.choice(parts, n)
            x, y = {"arrays": (a, b), "scalar second": (a, b[:1].reshape(())),
                    "scalar first": (a[:1].reshape(()), b)}[operands]
            if True:
                exp, wexp = _run(lambda: x * y)
                got, wgot = _run(lambda: npc.asarray(x) * npc.asarray(y))
                got = np.asarray(got).view(real)
                exp = exp.view(real)
                # Which NaN operand a part returns depends on the instruction forms NumPy's
                # build picked for this CPU (NumPy leaves it unspecified): NaN positions are
                # compared, and every other part bit for bit (signed zeros).
                nan_exp = np.isnan(exp)
                np.testing.assert_array_equal(np.isnan(got), nan_exp)
                np.testing.assert_array_equal(got[~nan_exp].view(view), exp[~nan_exp].view(view))
                assert wgot == wexp
