"""Reductions to a single value run on every thread (Note [parallel scalar reductions] in
src/fusion/kir_passes.cpp) where the order cannot change the result (integer sums, max/min):
one contiguous range per thread, partial results combined in thread order (checked in the
generated source). Float sums add in NumPy's pairwise order on one thread (Note [summation]),
bit for bit NumPy's result.
"""
import os

import numpy as np
import pytest

import npc
from npc import _core


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-psum")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def generated_source(fn, args, capfd):
    old = _core._fusion_get_config()["output_code"]
    _core._fusion_set_config({"output_code": True})
    try:
        capfd.readouterr()
        out = npc.compile(fn, backend="fused")(*args)
        return out, capfd.readouterr().err
    finally:
        _core._fusion_set_config({"output_code": old})


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_full_float_sum_is_numpys_pairwise_sum_on_one_thread(dtype, capfd):
    # Note [summation] in src/fusion/lower_reduce.cpp: a float sum to one value adds in NumPy's
    # pairwise order, bit for bit; splitting it over threads would change the order.
    rng = np.random.default_rng(5)
    a = ((rng.random(1_000_003) + 0.5) * 0.01).astype(dtype)  # the float16 sum stays finite
    fn = lambda a: np.sum(a * 2) + 1  # noqa: E731
    got, src = generated_source(fn, (a,), capfd)
    assert "npk_parts_" not in src
    want = fn(a)
    assert np.asarray(got).dtype == want.dtype
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    f = npc.compile(fn, backend="fused")
    first = np.asarray(f(a))
    for _ in range(5):
        assert np.asarray(f(a)).tobytes() == first.tobytes()


@pytest.mark.parametrize("case", ["int64 sum", "float max"])
def test_exact_reductions_are_split_over_threads(case, capfd):
    # Reductions whose result does not depend on the order (wrapping integer sums, max) are
    # split: one contiguous range per thread.
    rng = np.random.default_rng(6)
    if case == "int64 sum":
        a, fn = rng.integers(-10**12, 10**12, 1_000_003), (lambda a: np.sum(a * 3) + 1)
    else:
        a, fn = rng.random(1_000_003), (lambda a: np.max(a * 2))
    got, src = generated_source(fn, (a,), capfd)
    assert "npk_parts_" in src, "the reduction was not split over the threads"
    want = fn(a)
    assert np.asarray(got).dtype == want.dtype
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_sum_with_initial_and_small_sums(capfd):
    a = np.linspace(-1.0, 3.0, 200_001)
    fn = lambda a: np.sum(a * a, initial=5.0)  # noqa: E731
    got, src = generated_source(fn, (a,), capfd)
    np.testing.assert_allclose(got, fn(a), rtol=1e-13)
    small = np.linspace(0.0, 1.0, 1000)  # too short to split: one thread
    got, src = generated_source(lambda a: np.sum(a + 1.0), (small,), capfd)
    assert "npk_parts_" not in src
    np.testing.assert_allclose(got, np.sum(small + 1.0), rtol=1e-14)


def _warnings_match(fn, a):
    import warnings
    with warnings.catch_warnings(record=True) as want, np.errstate(all="warn"):
        warnings.simplefilter("always")
        fn(a)
    f = npc.compile(fn, backend="fused")
    with warnings.catch_warnings(record=True) as got, np.errstate(all="warn"):
        warnings.simplefilter("always")
        r = f(a)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert np.isinf(r)


def test_overflow_in_a_large_sum_warns_as_numpy():
    _warnings_match(lambda a: np.sum(a * 1e308), np.full(300_000, 10.0))


def test_overflow_only_in_a_large_sum_is_named_reduce():
    _warnings_match(lambda a: np.sum(a * 10.0), np.full(300_000, 1e305))
