"""Compiled results that NumPy computes exactly are NumPy's bit for bit: complex division
(Smith's algorithm with every product rounded, no fused multiply-add) and float -> uint32
casts of out-of-range values (those NumPy's loop defines, with its 'invalid value
encountered in cast' warning). Both backends against NumPy running the same function."""
import warnings

import numpy as np
import pytest

import npc
from npc import _core, compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-exact-values")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def _complex(rng, n, dt):
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_complex_division_bits(dt, backend):
    rng = np.random.default_rng(7)
    a, b = _complex(rng, 5000, dt), _complex(rng, 5000, dt)
    with np.errstate(all="ignore"):
        b[:10] = [0, 1e-300, 1e300, 3, 3j, -0.0, np.inf, np.nan, 1 + 1j, 1e-320]
    f = lambda a, b: a / b  # noqa: E731
    check(f, (a, b), (b, a), backend=backend, warn=False)
    g = lambda a, b: (a * 2) / (b + 1) - a / 3  # noqa: E731
    check(g, (a, b), backend=backend, warn=False)


SPECIAL = [-1e20, 1e20, np.nan, -1.5, 5e9, 4294967296.0, -0.5, 1e10, -1e10, 2.0 ** 63, -2.0 ** 63,
           np.inf, -np.inf, 3e9, -3e9, 2.0 ** 32 + 5, -2.0 ** 31 - 1, 6e4, -7e4, 7.9]


def _specified(v, src):
    """NumPy casts v (and 2 v) of dtype src to uint32 alike on its scalar path and in its SIMD
    body (it does not for NaN, infinities and negative out-of-range values of float32/float64:
    those are left out, Note [float to int casts] in src/core/dispatch.hpp)."""
    with np.errstate(all="ignore"):
        for w in (v, 2 * v):
            x = np.array([w]).astype(src)
            if not (np.full(67, x[0]).astype(np.uint32) == x.astype(np.uint32)[0]).all():
                return False
    return True


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("n", [5, 20, 67])
def test_out_of_range_casts_to_uint32(n, src, backend):
    with np.errstate(all="ignore"):
        x = np.resize(np.array([v for v in SPECIAL if _specified(v, src)]), n).astype(src)
    check(lambda x: x.astype(np.uint32), (x,), (x[::-1].copy(),), backend=backend)
    check(lambda x: (x * 2).astype(np.uint32) + 1, (x,), backend=backend)


# Note [mixed int64/uint64 comparisons] in src/tracer/trace_hooks.cpp: NumPy 2 compares a signed
# with an unsigned 64-bit integer exactly (no wrapping cast to either side).
SIGNED = np.array([-1, 5, -(2**63), 3, 2**63 - 1, 0], np.int64)
UNSIGNED = np.array([0, 2**64 - 1, 1, 3, 2**63, 0], np.uint64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("signed", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("op", [r.name for r in _core.op_table() if r.resolver == "Comparison"])
def test_signed_unsigned_64_bit_comparisons(op, signed, backend):
    ufunc = getattr(np, op)

    def f(s, u):
        return ufunc(s, u), ufunc(u, s), ufunc(s[::-1], u[0])

    check(f, (SIGNED.astype(signed), UNSIGNED), backend=backend)


def _bits(x):
    x = np.asarray(x)
    return x.view(np.uint32 if x.dtype == np.complex64 else np.uint64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("fn", [
    lambda a: (a * (2 - 1j)).conj(),
    lambda a: -(a * (2 - 1j)),
    lambda a: np.negative(a * a[::-1]),
    lambda a: np.conjugate(a * 1),
], ids=["conj_of_product", "neg_of_product", "negative_of_product", "conjugate_of_int_product"])
def test_negated_parts_of_products_keep_the_sign_of_zero(fn, dt, backend):
    # -(x*y + z) must not become -(x*y) - z: NumPy negates a +0 part into -0.
    z = np.array([0j, 1 + 0j, complex(0, -0.0), complex(-0.0, 0), 2 - 1j] * 7, dt)
    got, want = npc.compile(fn, backend=backend)(z), fn(z)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))


# Fuzzer seeds 100897 and 102313: `a /= a` gave imaginary parts of 2.6e-17 in the eager loops'
# scalar tail (their AVX2/AVX-512 versions fused a product into vfmaddsub), and a quotient by
# one complex value differed in about a third of the elements; NumPy's Smith division gives 0.
SHORT = [1 - 1.5j, -0.5 + 3j, 3.5 - 1j, -1 - 3j, 2 - 3j, 3 - 0.5j, -2 + 0.5j, 1.5 + 0.5j, 1 - 1.5j]


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_eager_complex_division_bits_in_every_loop(dt):
    rng = np.random.default_rng(3)
    for x in [np.array(SHORT[:n], dt) for n in range(1, len(SHORT) + 1)] + [_complex(rng, 999, dt)]:
        y = np.roll(x, 1)
        with np.errstate(all="ignore"):
            cases = [(x / x, npc.array(x) / npc.array(x)), (x / y, npc.array(x) / npc.array(y)),
                     (x / y[0], npc.array(x) / npc.array(y)[0]), (y[0] / x, npc.array(y)[0] / npc.array(x))]
            inplace = npc.array(x)
            inplace /= inplace
            cases.append((x / x, inplace))
        for want, got in cases:
            got = np.asarray(got)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_complex_division_in_place_by_itself(dt, backend):
    def f(a):
        a /= a
        return a / a[-1]

    for n in (1, 3, 5, 9):
        a = np.array(SHORT[:n], dt)
        cf = npc.compile(f, backend=backend)
        got_a, want_a = a.copy(), a.copy()
        got, want = cf(got_a), f(want_a)
        np.testing.assert_array_equal(_bits(got), _bits(want))
        np.testing.assert_array_equal(_bits(got_a), _bits(want_a))


# Note [one-element loops] in src/ops/one_element_loops.hpp: NumPy's iterator runs a complex
# product of one element through its scalar loop when the output is an input (in place) or
# the ranks differ; fuzzer seed 101145 (the "invalid" of (inf+nanj) * True in place).
def _in_place(xp, x, y):
    x *= y
    return x


def _out_is_input(xp, x, y):
    return xp.multiply(x, y, out=x)


def _square_in_place(xp, x, y):
    return xp.square(x, out=x)


def _zero_d_in_place(xp, x, y):
    z = x.reshape(())
    z *= y[0]
    return z


def _ranks_differ(xp, x, y):
    return x[None] * y


def _by_python_bool(xp, x, y):
    return xp.multiply(x, True, out=x)


ONE_ELEMENT = [_in_place, _out_is_input, _square_in_place, _zero_d_in_place, _ranks_differ, _by_python_bool]


def _run_recording(fn, *args):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, [(w.category, str(w.message)) for w in rec]


@pytest.mark.parametrize("mode", ["npc", "eager", "fused"])
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("fn", ONE_ELEMENT, ids=lambda f: f.__name__.strip("_"))
def test_one_element_complex_products_run_numpys_scalar_loop(fn, dt, mode):
    rng = np.random.default_rng(5)
    pairs = [(complex(np.inf, np.nan), 1 + 0j)] + list(zip(_complex(rng, 40, dt), _complex(rng, 40, dt)))
    cf = None if mode == "npc" else npc.compile(lambda x, y: fn(np, x, y), backend=mode)
    for a, b in pairs:
        x, y = np.array([a], dt), np.array([b], dt)
        want, ww = _run_recording(fn, np, x.copy(), y.copy())
        if mode == "npc":
            got, gw = _run_recording(fn, npc, npc.array(x), npc.array(y))
        else:
            got, gw = _run_recording(cf, x.copy(), y.copy())
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got.reshape(-1)), _bits(want.reshape(-1)))
        assert gw == ww
