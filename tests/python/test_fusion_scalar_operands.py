"""A runtime scalar read by an operation that fused code runs on the eager kernels (a host
call between kernels: gcd, lcm, ...) is passed as its materialised value (Note [library calls]
in src/fusion/lower_group.cpp)."""
import numpy as np
import pytest

import npc


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_literal_after_a_graph_break_reaches_a_host_call(backend):
    # Fuzzer seed 60096: after a break, the literal 255 is a runtime scalar of the segment;
    # the fused backend passed its slot (no array) to gcd, which saw a float64 0-d value.
    def f(a0):
        v1 = a0[a0 != 0]  # a graph break
        v3 = a0 != a0
        return np.gcd(v3, 255), np.lcm(a0.astype(np.int64), 6), v1

    a = np.array([[3, .5, 0], [np.inf, -2.5, 0], [2.2e-308, -3, .25]])
    with np.errstate(invalid="ignore"):
        want = f(a)
        npc.compiler.reset()
        cf = npc.compile(f, backend=backend)
        for _ in range(2):
            got = cf(a.copy())
            for w, g in zip(want, got):
                assert w.dtype == g.dtype and w.shape == g.shape
                np.testing.assert_array_equal(g, w)
