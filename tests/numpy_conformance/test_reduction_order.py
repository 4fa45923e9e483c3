"""Float reductions accumulate in NumPy's order (Note [NumPy reduction order] in
src/ops/reduce.cpp): on order-sensitive data the results are identical to
NumPy's (0 ULP) for C, Fortran, transposed, strided and reversed views and every axis
combination. npc's NumPy fallback is an error here."""
import itertools

import numpy as np
import pytest

import npc
from npc import _fallback

from _ufunc_helpers import assert_same


@pytest.fixture(autouse=True)
def strict_fallback():
    old = _fallback.config.strict_fallback
    _fallback.config.strict_fallback = True
    yield
    _fallback.config.strict_fallback = old


VIEWS = {
    "c": lambda b: b,
    "fortran": np.asfortranarray,
    "transposed": lambda b: b.transpose(2, 0, 1),
    "strided": lambda b: b[:, ::2, :],
    "rev-all": lambda b: b[::-1, ::-1, ::-1],
    "rev0": lambda b: b[::-1],
    "rev1": lambda b: b[:, ::-1, :],
    "rev2": lambda b: b[:, :, ::-1],
    "rev-transposed": lambda b: b[::-1].transpose(1, 2, 0),
}
CASES = [pytest.param(n, v, id=f"{n}-{v}") for n in ("sum", "prod", "mean", "nansum") for v in VIEWS]
AXES = [None, 0, 1, 2, (0, 1), (0, 2), (1, 2), (2, 0)]


@pytest.mark.parametrize("name,view", CASES)
def test_reduction_order_bits(name, view):
    old = npc.get_num_threads()
    npc.set_num_threads(1)
    bad = []
    try:
        for shape in ((4, 6, 5), (3, 40, 7), (5, 3, 300), (2, 3, 9000)):
            for dtype in ("float32", "float64", "complex64", "complex128"):
                rng = np.random.default_rng(11)
                v = rng.standard_normal(shape) * 1e3
                w = v[..., ::-1]
                if name == "prod":  # products of numbers near 1: order-sensitive, no overflow
                    v, w = 1 + v / 1e5, w / 1e5
                base = v.astype(dtype) if dtype.startswith("f") else (v + 1j * w).astype(dtype)
                a = VIEWS[view](base)
                for axis in AXES:
                    e = getattr(np, name)(a, axis=axis)
                    g = getattr(npc, name)(npc.asarray(a), axis=axis)
                    try:
                        assert_same(g, e, name, 0, f"{name} {dtype} {shape} {view} axis={axis}")
                    except AssertionError as exc:
                        bad.append(str(exc)[:200])
    finally:
        npc.set_num_threads(old)
    assert not bad, f"{len(bad)} mismatches: " + "\n".join(bad[:5])
