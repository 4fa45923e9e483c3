"""The memory layout of traced results decides whether `ravel()`/`reshape` of them is a view
or a copy, and so whether a later write shows through: it must be NumPy's (K order: a ufunc
of an F-ordered array is F-ordered, and its ravel() a copy)."""
import numpy as np
import pytest

import npc


def _writes_through_ravel(a0, s1):
    v1 = a0 + a0
    v3 = v1.ravel()  # NumPy: a copy, v1 being F-ordered
    v3[v3 != 0] += s1
    return v1.ravel()


@pytest.mark.xfail(strict=True, reason="traced ufunc results are C-ordered where NumPy's follow an F-ordered "
                   "operand (K order), so ravel() of them is a view in the trace: a write into it reaches the "
                   "value (fuzzer seed 70524)")
@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_ravel_of_an_f_ordered_result_is_a_copy(backend):
    a = np.asfortranarray(np.arange(1, 21, dtype=np.uint16).reshape(5, 4))
    want = _writes_through_ravel(a.copy(order="K"), True)
    npc.compiler.reset()
    got = npc.compile(_writes_through_ravel, backend=backend)(np.asfortranarray(a), True)
    np.testing.assert_array_equal(got, want)


def test_eager_ravel_of_an_f_ordered_result_is_a_copy():
    a = np.asfortranarray(np.arange(1, 21, dtype=np.uint16).reshape(5, 4))
    want = _writes_through_ravel(np.asfortranarray(a), True)
    got = _writes_through_ravel(npc.asarray(np.asfortranarray(a)), True)
    np.testing.assert_array_equal(np.asarray(got), want)
