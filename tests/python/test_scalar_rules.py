"""NumPy's element rules live in one header, include/npc/scalar_rules.hpp (Note [scalar rules]).

The eager kernels include it; the fused kernels' prelude is src/fusion/prelude_cpu.hpp with the
header's text (and src/ops/vector_math_block.hpp's) inlined at build time. These tests check the embedding (the generated source holds
the header verbatim, so editing a rule changes every kernel's cache key) and that eager and
compiled code give NumPy's values for the rules they share.
"""
import os
import pathlib
import warnings

import numpy as np
import pytest

import npc
from npc import _core

from _ulps import ulp_bound

ROOT = pathlib.Path(__file__).resolve().parents[2]
RULES = ROOT / "include" / "npc" / "scalar_rules.hpp"
PRELUDE = ROOT / "src" / "fusion" / "prelude_cpu.hpp"
INCLUDE_LINE = '#include "npc/scalar_rules.hpp"\n'
VMATH = ROOT / "src" / "ops" / "vector_math_block.hpp"
VMATH_LINE = '#include "ops/vector_math_block.hpp"\n'


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def generated_source(fn, args, capfd):
    """The translation unit compiled for fn(*args) (printed by output_code)."""
    capfd.readouterr()
    old = _core._fusion_get_config()["output_code"]
    _core._fusion_set_config({"output_code": True})
    try:
        npc.compile(fn, backend="fused")(*args)
    finally:
        _core._fusion_set_config({"output_code": old})
    return capfd.readouterr().err


def test_the_prelude_is_the_scalar_rules_header_inlined_in_prelude_cpu(capfd):
    x = np.arange(1, 9, dtype=np.int32)
    src = generated_source(lambda a, b: np.floor_divide(a, b) + np.remainder(a, b), (x, x[::-1].copy()), capfd)
    rules, prelude = RULES.read_text(), PRELUDE.read_text()
    assert prelude.count(INCLUDE_LINE) == 1 and prelude.count(VMATH_LINE) == 1
    head, tail = prelude.split(INCLUDE_LINE)
    # the whole prelude, verbatim: nothing in generated code is kept by hand apart from these
    # files (the eager loops' vector-math blocks are embedded the same way)
    assert head + rules + tail.replace(VMATH_LINE, VMATH.read_text()) in src
    assert "npk::ufunc::floor_divide<int32_t>" in src and "npk::ufunc::remainder<int32_t>" in src


def test_editing_a_rule_changes_the_cache_key(capfd):
    x = np.arange(4.0)
    src = generated_source(lambda a: np.heaviside(a - 1.5, 0.5), (x,), capfd)
    tu = src[src.index("// The runtime prelude"):]
    rule = "return x == 0 ? h0 : std::signbit(x) ? T(0) : T(1);"
    assert tu.count(rule) == 1
    edited = tu.replace(rule, "return x == 0 ? h0 : std::signbit(x) ? T(1) : T(0);")
    assert _core._fusion_cache_key(edited) != _core._fusion_cache_key(tu)


# ---------------------------------------------------------------- shared rules, eager vs compiled
def special_values(dtype, n_random=300, seed=0):
    """Every pair of special values (zeros of both signs, infinities, NaN, extremes, MIN and -1
    for integers), then random pairs."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        sp = {0, 1, 2, 3, 7, info.max, info.min, dt.itemsize * 8 - 1, dt.itemsize * 8}
        if dt.kind == "i":
            sp |= {-1, -2, -7, info.min + 1}
        sp = np.array(sorted(sp), dtype=dt)
        ra = rng.integers(info.min, info.max, n_random, dtype=dt, endpoint=True)
        rb = rng.integers(max(info.min, -20), 20, n_random).astype(dt)
    else:
        real = np.empty(0, dt).real.dtype
        fi = np.finfo(real)
        sp = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                       fi.tiny, fi.smallest_subnormal, 88.7, -104.0], dtype=real)
        ra = (rng.standard_normal(n_random) * 10.0 ** rng.uniform(-3, 3, n_random)).astype(real)
        rb = (rng.standard_normal(n_random) * 10.0 ** rng.uniform(-3, 3, n_random)).astype(real)
    A, B = np.meshgrid(sp, sp)
    a, b = np.concatenate([A.ravel(), ra]), np.concatenate([B.ravel(), rb])
    if dt.kind == "c":
        a = (a + 1j * np.roll(a, 5)).astype(dt)
        b = (b + 1j * np.roll(b, 11)).astype(dt)
    return a, b


def same_values(got, want, zero_sign=True):
    """Equal values and dtypes; signed zeros count (unless zero_sign is False), NaN payloads
    (unspecified in NumPy) do not."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind in "fc":
        g = got.view(want.real.dtype) if want.dtype.kind == "c" else got
        w = want.view(want.real.dtype) if want.dtype.kind == "c" else want
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan)
        g, w = g[~nan], w[~nan]
        bad = np.nonzero((g != w) | (zero_sign & (np.signbit(g) != np.signbit(w))))[0]
    else:
        bad = np.nonzero(got != want)[0]
    assert bad.size == 0, (bad[:5], got.ravel()[bad[:5]], want.ravel()[bad[:5]])


# The ufuncs checked for a dtype come from the op table: every row with one output whose generated
# code renders the dtype's kind, with a loop taking that dtype for every input, and whose NumPy
# results are exact (no ULP bound in tests/numpy_conformance/ulp_tolerances.csv).
_ROWS = [r for r in _core.op_table() if r.kind == 0 and r.nout == 1 and r.nin in (1, 2)]
_EMIT_KIND = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}


def rendered_exact_ops(dtype, nin):
    dt = np.dtype(dtype)
    ops = []
    for r in _ROWS:
        emit = r.emit.get("cpp")
        if r.nin != nin or emit is None or emit[0] != "pattern" or _EMIT_KIND[dt.kind] not in emit[2]:
            continue
        if not any(loop.split("->")[0] == dt.char * nin for loop in r.loops.split()):
            continue
        if ulp_bound(r.name, dt) == 0:
            ops.append(r.name)
    return ops


CASES = {dt: (rendered_exact_ops(dt, 2), rendered_exact_ops(dt, 1))
         for dt in ["int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "float32", "float64",
                    "complex64", "complex128"]}


@pytest.mark.parametrize("dtype", list(CASES))
def test_shared_rules_give_numpys_values_eager_and_compiled(dtype):
    binary, unary = CASES[dtype]
    a, b = special_values(dtype)

    def program(x, y):
        return tuple(getattr(np, op)(x, y) for op in binary) + tuple(getattr(np, op)(x) for op in unary)

    f = npc.compile(program, backend="fused")
    s0 = npc._fusion.stats()
    with np.errstate(all="ignore"):
        want = program(a, b)
        got = f(a, b)
        eager = program(npc.asarray(a), npc.asarray(b))
    s1 = npc._fusion.stats()
    assert s1["fallbacks"] == s0["fallbacks"] and s1["kernel_runs"] > s0["kernel_runs"]
    assert not f.last_breaks, f.last_breaks
    for op, g, e, w in zip(binary + unary, got, eager, want):
        # NumPy's float32/float64 fmax/fmin return either zero for (0.0, -0.0), by SIMD path;
        # maximum/minimum give the second operand (test_compiled_float_maximum_signed_zero_ties)
        zero_sign = not (op in ("fmax", "fmin") and dtype in ("float32", "float64"))
        try:
            same_values(e, w, zero_sign)
            same_values(g, w, zero_sign)
        except AssertionError as err:
            raise AssertionError(f"{op}: {err}") from None


# Note [maximum ties in kernels] (src/fusion/lower_expr.cpp): NumPy runs its SIMD loop (ties
# give the second operand) for every layout of an elementwise float32/float64 maximum/minimum.
LAYOUTS = {
    "contiguous": lambda a, b: (a, b),
    "reversed": lambda a, b: (a[::-1], b[::-1]),
    "strided": lambda a, b: (a[::2], b[1::2]),
    "scalar": lambda a, b: (a, b[1]),
    "scalar_first": lambda a, b: (a[0], b),
    "2d": lambda a, b: (a.reshape(4, 4).T, b.reshape(4, 4)),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_compiled_float_maximum_signed_zero_ties(op, dtype, layout, tmp_path):
    a = np.array([0.0, -0.0] * 8, dtype)
    b = np.array([-0.0, 0.0] * 8, dtype)
    x, y = LAYOUTS[layout](a, b)
    fn = lambda x, y: getattr(np, op)(x, y)  # noqa: E731
    with npc.config.patch(cache_dir=str(tmp_path)):
        for backend in ("fused", "eager"):
            got = npc.compile(fn, backend=backend)(x, y)
            same_values(got, fn(x, y))
    same_values(fn(npc.asarray(x), npc.asarray(y)), fn(x, y))


def test_compiled_complex_absolute_contiguous():
    # NumPy's SIMD formula (npk::cabs_vec) on a contiguous array, not npy_hypot (Note [complex
    # absolute] in include/npc/scalar_rules.hpp; tests/python/test_complex_abs_paths.py).
    z = np.array([3 + 4j, 1e-3 + 7j, 5.5 + 1.1j] * 100)
    got = npc.compile(lambda x: np.absolute(x), backend="fused")(z)
    same_values(got, np.absolute(z))


# ---------------------------------------------------------------- complex order, eager and compiled
def _warnings_of(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return r, sorted({str(m.message) for m in w})


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["less", "less_equal", "greater", "greater_equal"])
def test_complex_order_is_numpys_in_generated_code(op, dtype):
    """less/less_equal/greater/greater_equal of complex values run in the fused kernel (the
    scalar rule npk::corder) with NumPy's values and its "invalid" warning: NaN in either
    part, signed zeros, equal real parts with differing or NaN imaginary parts."""
    parts = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]
    pairs = [complex(r, i) for r in parts for i in parts]
    a = np.array([p for p in pairs for _ in pairs], dtype=dtype)
    b = np.array([q for _ in pairs for q in pairs], dtype=dtype)
    f = lambda x, y: getattr(np, op)(x, y)  # noqa: E731
    cf = npc.compile(f, backend="fused")
    for x, y in [(a, b), (a[:7], b[:7]), (a[~np.isnan(a)], b[~np.isnan(a)]), (a[::-3], b[::3])]:
        x, y = x.copy(), y.copy()
        want, want_w = _warnings_of(f, x, y)
        s0 = npc._fusion.stats()
        got, got_w = _warnings_of(cf, x, y)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"] and s1["kernel_runs"] > s0["kernel_runs"]
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got_w == want_w, (len(x), got_w, want_w)
        eager, eager_w = _warnings_of(f, npc.asarray(x), npc.asarray(y))
        np.testing.assert_array_equal(np.asarray(eager), want)
        assert eager_w == want_w
