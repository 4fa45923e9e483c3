"""Floating-point flags that only a fused kernel's order of evaluation raises are not
reported (Note [fp error attribution] in src/fusion/backend.cpp): a blocked sum of inf,
-inf and NaN may meet inf + -inf before the NaN that NumPy's order meets first, and NumPy
then raises nothing (a differential fuzzer finding, tests/fuzz)."""
import warnings

import numpy as np
import pytest

import npc


def f(a):
    return a.mean()


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_sum_of_inf_minus_inf_and_nan_warns_as_numpy(backend):
    v = np.array([-1.0, -0.5, 1.5, np.inf, -np.inf, -1.0, -1.5, 0.0, 3.0, 3.4028234663852886e38, 2.75, -0.0, 1.5,
                  np.nan, 0.5], np.float32)
    a = np.transpose(np.ascontiguousarray(np.transpose(v.reshape(3, 5), (1, 0))), (1, 0))
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        r = f(a)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        g = npc.compile(f, backend=backend)(a)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert np.isnan(g) and np.isnan(r)
