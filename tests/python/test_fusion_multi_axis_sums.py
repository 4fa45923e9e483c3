"""Float sums over several axes in fused code sum each run of the innermost reduced axis on its
own and add the runs in order (Note [runs of a multi-axis sum] in src/fusion/lower_reduce.cpp),
as NumPy's reduce loop adds the pairwise sum of each inner run into its output. Fuzzer seed
100093: bool var(axis=(-3, -1)) of a (7, 4, 6) array was 9 ULPs from NumPy's (one running sum
over the 42 elements)."""
import numpy as np
import pytest

import npc
from npc import compiler


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-multi-axis-sums")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis", [((7, 4, 6), (0, 2)), ((5, 3, 7), (0, 2)), ((6, 2, 3, 5), (0, 1, 3)),
                                         ((40, 3, 7), (0, 2))])
def test_sum_over_outer_and_last_axes_is_numpy_bits(shape, axis, dtype):
    # The innermost axis is reduced and shorter than 8: NumPy adds each run in order into the
    # output, run after run (C-ordered operand).
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 1e3).astype(dtype)

    def f(a):
        return (a * 1.5).sum(axis=axis)

    want = f(x)
    got = np.asarray(npc.compile(f, backend="fused")(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _ulps(got, want):
    return float(np.max(np.abs(got - want) / np.spacing(np.abs(want))))


@pytest.mark.parametrize("axis", [(0, 2), (1, 2)])
def test_var_over_two_axes_within_the_budget_of_var(axis):
    # tests/numpy_conformance/ulp_tolerances.csv: var, 4 ULPs (NumPy sums a run of trailing
    # reduced axes coalesced, pairwise: another order, not the same bits).
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.random((7, 4, 6)) < 0.3

        def f(a):
            return a.var(axis=axis, keepdims=True)

        want = f(x)
        got = np.asarray(npc.compile(f, backend="fused")(x))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert _ulps(got, want) <= 4
