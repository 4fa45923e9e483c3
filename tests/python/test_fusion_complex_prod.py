"""Complex products of compiled reductions and scans where a product overflows (Note [complex
products in reductions] in src/fusion/lower_reduce.cpp).

NumPy multiplies complex numbers with its SIMD formula (fused multiply-adds) or its scalar one
(each product rounded); they differ only where a product overflows: (-inf + nan j) against
(-inf + inf j). np.prod over the innermost axis runs the scalar formula, cumprod the scalar
one except along an axis of two elements. Compiled results (both backends) must be NumPy's
bits, and eager npc's.
"""
import warnings

import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


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


FUSED_C8_REVERSED = pytest.mark.xfail(
    strict=True, reason="fused complex64 cumprod along a reversed axis of two takes the FMA product; "
    "NumPy's accumulate loop steps the input backwards and the output forwards, which picks its "
    "scalar product (eager npc does, Note [loops by stride sign])")


def _case_params():
    out = []
    for case in CASES:
        for dtype, ident in ((np.complex128, "c16"), (np.complex64, "c8")):
            for backend in BACKENDS:
                bad = case == "cumprod_reversed" and dtype == np.complex64 and backend == "fused"
                out.append(pytest.param(case, dtype, backend, id=f"{backend}-{case}-{ident}",
                                        marks=[FUSED_C8_REVERSED] if bad else []))
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


@pytest.mark.xfail(strict=True, reason="complex products over outer axes of four or more rows: NumPy's "
                   "buffered iterator mixes its SIMD and scalar formulas per element; fused code uses the "
                   "SIMD one (Note [complex products in reductions])")
def test_outer_axis_products_of_many_rows():
    fn = lambda a: np.prod(a, axis=0)  # noqa: E731
    cf = npc.compile(fn, backend="fused")
    for seed in range(4):
        x = overflowing(np.complex128, (5, 8), seed)
        assert run(cf, x).tobytes() == run(fn, x).tobytes()
