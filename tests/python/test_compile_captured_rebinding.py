"""A captured array rebound between calls is seen by the next call (Note [captured arrays] in
python/npc/compiler/_guards.py), also when the new array object takes the id of a freed one
(npc reuses dead array objects, Note [array object cache] in python/npc/csrc/bind_ndarray.cpp)."""
import numpy as np
import pytest

import npc


@pytest.mark.parametrize("backend", ["eager", "fused"])
@pytest.mark.parametrize("mod", [npc, np])
def test_rebound_captured_array_in_a_list(backend, mod):
    c = [mod.full(3, 10.0)]
    g = npc.compile(lambda x: x * c[0], backend=backend)
    got = []
    for v in [11.0, 12.0, 13.0, 14.0]:
        got.append(float(np.asarray(g(mod.ones(3)))[0]))
        c[0] = mod.full(3, v)
    got.append(float(np.asarray(g(mod.ones(3)))[0]))
    assert got == [10.0, 11.0, 12.0, 13.0, 14.0]


W = None


@pytest.mark.parametrize("backend", ["eager", "fused"])
def test_rebound_captured_global(backend):
    global W
    W = npc.full(3, 1.0)
    g = npc.compile(lambda x: x + W, backend=backend)
    for v in range(2, 7):
        assert float(np.asarray(g(npc.zeros(3)))[0]) == v - 1
        W = npc.full(3, float(v))
