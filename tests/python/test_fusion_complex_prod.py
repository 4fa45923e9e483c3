"""Complex products of compiled reductions and scans where a product overflows (Note [complex
products in reductions] in src/fusion/lower_reduce.cpp).

NumPy multiplies complex numbers with its SIMD formula (fused multiply-adds) or its scalar one
(each product rounded); they differ only where a product overflows: (-inf + nan j) against
(-inf + inf j). np.prod over the innermost axis runs the scalar formula, cumprod the scalar
one except along an axis of two elements. Compiled results (both backends) must be NumPy's
bits, and eager npc's.
"""
import itertools
import warnings

import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]
inf = float("inf")


def overflowing(dtype, shape, seed):
    """Random phases, magnitudes around the square root of the dtype's largest value: products
    of two elements overflow in one part or both."""
    rng = np.random.default_rng(seed)
    lo, hi = (150, 160) if dtype == np.complex128 else (17, 21)
    m = 10.0 ** rng.uniform(lo, hi, shape)
    return (m * np.exp(1j * rng.uniform(0, 2 * np.pi, shape))).astype(dtype)


CASES = {
    "prod_2": (lambda a: np.prod(a[0, :2]), (2, 32)),
    "prod_3": (lambda a: np.prod(a[0, :3]), (2, 32)),
    "prod_long": (lambda a: np.prod(a[0, :20]), (2, 32)),
    "prod_reversed": (lambda a: np.prod(a[0, ::-1]), (2, 32)),
    "prod_strided": (lambda a: np.prod(a[0, ::2]), (2, 32)),
    "prod_axis1_2": (lambda a: np.prod(a, axis=1), (32, 2)),
    "prod_axis1_5": (lambda a: np.prod(a, axis=1), (32, 5)),
    "prod_axis0_2": (lambda a: np.prod(a, axis=0), (2, 32)),
    "prod_axis0_3": (lambda a: np.prod(a, axis=0), (3, 32)),
    "prod_transposed": (lambda a: np.prod(a.T, axis=1), (2, 32)),
    "prod_of_product": (lambda a: np.prod(a[0] * 1, keepdims=True), (3, 3)),
    "cumprod": (lambda a: np.cumprod(a[0]), (2, 32)),
    "cumprod_axis1_2": (lambda a: np.cumprod(a, axis=1), (32, 2)),
    "cumprod_axis0_2": (lambda a: np.cumprod(a, axis=0), (2, 32)),
    "cumprod_axis0_3": (lambda a: np.cumprod(a, axis=0), (3, 32)),
    "cumprod_reversed": (lambda a: np.cumprod(a[::-1], axis=0), (2, 32)),
}


def quiet(fn, x):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(x)


def run(fn, x):
    return np.asarray(quiet(fn, x))


def _case_params():
    out = []
    for case in CASES:
        for dtype, ident in ((np.complex128, "c16"), (np.complex64, "c8")):
            for backend in BACKENDS:
                out.append(pytest.param(case, dtype, backend, id=f"{backend}-{case}-{ident}"))
    return out


@pytest.mark.parametrize("case,dtype,backend", _case_params())
def test_overflowing_products_as_numpy(case, dtype, backend, tmp_path):
    fn, shape = CASES[case]
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend=backend)
        for seed in range(4):
            x = overflowing(dtype, shape, seed)
            want = run(fn, x)
            assert run(lambda a: fn(npc.asarray(a)), x).tobytes() == want.tobytes(), "eager npc"
            assert run(cf, x).tobytes() == want.tobytes(), f"seed {seed}: {run(cf, x)} != {want}"


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c16", "c8"])
def test_overflowing_products_with_dynamic_sizes(dtype, tmp_path):
    """cumprod along an axis whose length varies between calls: the SIMD product at length 2
    only (chosen at run time), the scalar one otherwise."""
    fn = lambda a: (np.cumprod(a, axis=0), np.prod(a, axis=1), np.prod(a))  # noqa: E731
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend="fused")
        for seed, rows in enumerate((2, 3, 2, 5, 2)):
            x = overflowing(dtype, (rows, 8), seed)
            for g, w in zip(quiet(cf, x), quiet(fn, x)):
                assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), rows


def test_nan_and_inf_parts_named():
    """The reproducer: NumPy's (-inf + nan j) where the SIMD formula gives (-inf + inf j)."""
    x = overflowing(np.complex128, (3,), 1)
    want = run(np.prod, x)
    got = run(npc.compile(lambda a: np.prod(a), backend="fused"), x)
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c16", "c8"])
@pytest.mark.parametrize("rows", [4, 5, 9])
def test_outer_axis_products_of_many_rows(rows, dtype, tmp_path):
    """np.prod over rows is np.multiply(out, x[k], out=out) from ones, the SIMD formula for every
    row; where rows overflow, inf - inf and NaN parts meet, and NumPy's NaN keeps its sign (the
    fused code's fma(ar, br, -c) flipped it: Note [NaNs of the complex product])."""
    fn = lambda a: np.prod(a, axis=0)  # noqa: E731
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend="fused")
        for seed in range(4):
            x = overflowing(dtype, (rows, 8), seed)
            want = run(fn, x)
            out = np.ones(8, dtype)
            with np.errstate(all="ignore"):
                for k in range(rows):
                    np.multiply(out, x[k], out=out)
            assert out.tobytes() == want.tobytes(), "NumPy's rows"
            assert run(cf, x).tobytes() == want.tobytes(), seed
            assert run(lambda a: fn(npc.asarray(a)), x).tobytes() == want.tobytes(), "eager npc"


def _nan(k, dtype, neg=False):
    """A NaN of payload k (and the sign bit when `neg`) of float dtype `dtype`."""
    if dtype == np.float64:
        return np.array([(0xFFF8 if neg else 0x7FF8) << 48 | k], np.uint64).view(np.float64)[0]
    return np.array([(0xFFC00000 if neg else 0x7FC00000) | k], np.uint32).view(np.float32)[0]


@pytest.mark.parametrize("backend", ["npc", "fused", "eager"])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c16", "c8"])
@pytest.mark.parametrize("reversed_", [False, True], ids=["forward", "reversed"])
def test_nan_bits_of_complex_products(dtype, backend, reversed_):
    """Every mix of NaN parts (of distinct payloads and signs) and of parts whose products are
    inf - inf or 0 * inf: the product's NaN bits are NumPy's (Note [NaNs of the complex
    product])."""
    ft = np.float64 if dtype == np.complex128 else np.float32
    parts = [ft(1.5), ft(0.0), ft(np.inf), -ft(np.inf), _nan(1, ft), _nan(2, ft, True)]
    quads = np.array(list(itertools.product(parts, repeat=4)), ft)
    a = np.empty(len(quads), dtype)
    b = np.empty(len(quads), dtype)
    a.real, a.imag, b.real, b.imag = quads.T
    if reversed_:  # complex64: NumPy's scalar loop (npk::mul_plain), the same NaNs
        a = a[::-1]
    fn = lambda x, y: x * y  # noqa: E731
    want = run(lambda _: fn(a, b), None)
    if backend == "npc":
        got = run(lambda _: fn(npc.asarray(a), npc.asarray(b)), None)
    else:
        got = run(lambda _: npc.compile(fn, backend=backend)(a, b), None)
    g, w = got.view(ft), want.view(ft)
    u = np.uint64 if ft == np.float64 else np.uint32
    diff = np.nonzero(g.view(u) != w.view(u))[0]
    assert diff.size == 0, [(a[i // 2], b[i // 2], g[i], w[i]) for i in diff[:4]]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c16", "c8"])
def test_products_after_a_size_change_with_infs(dtype, tmp_path):
    """Fuzz seed 140150: prod(axis=0) of a 1-D array at a new (runtime) size runs in order on one
    thread: the split loop multiplied the identity by the one partial, (1 + 0j) * (-inf + nan j)
    is nan + nan j."""
    fn = lambda a: a.prod(axis=0)  # noqa: E731
    calls = [np.array([4 + 0.5j, complex(inf, 0), -2.5 + 1.5j, complex(inf, 1)], dtype),
             np.array([-2.5 + 0j, 1.5 + 1.5j, 4 - 3.5j, complex(1, inf), -1 - 3.5j], dtype),
             np.array([-2.5 + 0j, 1.5 + 1.5j, 4 - 3.5j, complex(1, inf), -1 - 3.5j, 2 + 0j], dtype)]
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend="fused")
        for x in calls:
            assert run(cf, x).tobytes() == run(fn, x).tobytes(), x


def test_long_float_products_run_in_order(tmp_path):
    """A float product is NumPy's running product however long: split over threads, partial
    products overflow and underflow elsewhere (inf * 0 is nan where NumPy has inf)."""
    fn = lambda a: np.prod(a)  # noqa: E731
    x = np.ones(300_000)
    x[:2] = 1e200
    x[-2:] = 1e-200
    y = x.copy()
    y[:2] = 1e-200
    y[-2:] = 1e200
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend="fused")
        for v in (x, y, x[:-1], y[1:]):
            assert run(cf, v).tobytes() == run(fn, v).tobytes()



@pytest.mark.parametrize("dtype", [np.complex128, np.complex64], ids=["c16", "c8"])
def test_nan_bits_and_flags_of_fused_butterflies(dtype):
    """Products inside fused kernels (an FFT butterfly: a broadcast twiddle times one half, added
    to and subtracted from the other; Note [one-element complex products] in
    include/npc/scalar_rules.hpp): NumPy's bits, NaN payloads included, and its warnings."""
    ft = np.float64 if dtype == np.complex128 else np.float32
    parts = [ft(1.5), ft(-0.0), ft(np.inf), -ft(np.inf), _nan(3, ft), _nan(4, ft, True)]
    quads = np.array(list(itertools.product(parts, repeat=4)), ft)
    odd = np.empty(len(quads), dtype)
    tw = np.empty(len(quads), dtype)
    odd.real, odd.imag, tw.real, tw.imag = quads.T
    even = np.arange(len(quads)).astype(dtype) * (1 - 2j)
    x = np.stack([even, odd]).reshape(2, 6, -1)
    t = tw.reshape(6, -1)[:, :1]

    def fn(x, t):
        e, o = x[0], x[1]
        return np.concatenate([e + t * o, e - t * o])
    with warnings.catch_warnings(record=True) as w_np:
        warnings.simplefilter("always")
        want = fn(x, t)
    with warnings.catch_warnings(record=True) as w_npc:
        warnings.simplefilter("always")
        got = np.asarray(npc.compile(fn)(x, t))
    u = np.uint64 if ft == np.float64 else np.uint32
    g, wv = got.view(ft).view(u), want.view(ft).view(u)
    assert np.array_equal(g, wv), np.nonzero(g != wv)[0][:4]
    assert sorted({str(m.message) for m in w_npc}) == sorted({str(m.message) for m in w_np})
