"""where= masks of ufunc calls and reductions: NumPy casts an array mask to bool under 'safe'
casting (TypeError for int and float arrays) and converts a mask that is not an array (a
list, a Python bool or int) to bool. npc's C++ core takes bool masks only."""
import warnings

import numpy as np
import pytest

import npc

from _diff import same_error


@pytest.mark.parametrize("mask", [np.array([1, 0]), np.array([1.0, 0.0]), np.array([1, 0], np.uint8)])
@pytest.mark.parametrize("call", ["reduce", "sum", "max", "call"])
def test_array_mask_of_another_dtype_is_a_type_error(mask, call):
    def fn(m):
        x = m.ones(2)
        w = mask if m is np else npc.asarray(mask)
        if call == "reduce":
            return m.add.reduce(x, where=w)
        if call == "sum":
            return m.sum(x, where=w)
        if call == "max":
            return m.max(x, where=w, initial=0)
        return m.add(x, 1, where=w, out=m.zeros(2))
    same_error(fn)


@pytest.mark.parametrize("mask", [[1, 0], [True, False], [1.5, 0.0], 1, 0, True])
def test_non_array_mask_converts_to_bool(mask):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda m: m.add.reduce(m.arange(1.0, 3.0), where=mask),
                   lambda m: m.sum(m.arange(1.0, 3.0), where=mask),
                   lambda m: m.add(m.arange(2.0), 1, where=mask, out=m.zeros(2))):
            exp, got = fn(np), fn(npc)
            np.testing.assert_array_equal(np.asarray(got), exp)
