"""Arrays and numbers read through attributes of captured objects (`m.w` with `m` a global or
closure object, `self.w` in a method, `m.sub.w`) are guarded (Note [attribute reads] in
python/npc/compiler/_guards.py): rebinding the attribute between calls gives the new values,
as NumPy does, and in-place changes of the array are seen; compiled results are compared with
the same function run with NumPy, both backends."""
import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ["fused", "eager"]


class Model:
    def __init__(self, w, k=2.0):
        self.w = w
        self.k = k


class Net:
    def __init__(self):
        self.w = np.full(3, 2.0)
        self.sub = Model(np.ones(3))

    def forward(self, x):
        return x * self.w + self.sub.w


M = Model(np.ones(3))


def _global_read(x):
    return x * M.w + M.k


def _global_expression(x):
    return x + M.w * 2  # M.w * 2 alone: traced too, never frozen


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_global_read, _global_expression], ids=lambda f: f.__name__)
def test_rebound_attribute_of_a_global(fn, backend):
    M.w, M.k = np.ones(3), 2.0
    cf = npc.compile(fn, backend=backend)
    x = np.arange(3.0)
    for step in range(5):
        np.testing.assert_array_equal(cf(x), fn(x), err_msg=f"step {step}")
        if step == 0:
            M.w = np.full(3, 5.0)       # rebinding
        elif step == 1:
            M.w[0] = 7.0                # in place
        elif step == 2:
            M.k = 3.0                   # a number
        elif step == 3:
            M.w = np.arange(3.0) * 4    # rebinding again
    M.w, M.k = np.ones(3), 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebound_attribute_of_a_closure_object(backend):
    m = Model(npc.ones(3))
    cf = npc.compile(lambda x: x - m.w, backend=backend)
    x = npc.arange(3.0)
    for v in (1.0, 4.0, -2.0):
        m.w = npc.full(3, v)
        np.testing.assert_array_equal(cf(x), x - v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_method_reads_self_and_nested_attributes(backend):
    net = Net()
    cf = npc.compile(Net.forward, backend=backend)
    x = np.arange(3.0)
    for step in range(4):
        np.testing.assert_array_equal(cf(net, x), net.forward(x), err_msg=f"step {step}")
        if step == 0:
            net.w = np.zeros(3)
        elif step == 1:
            net.sub.w = np.full(3, 9.0)
        elif step == 2:
            net.sub = Model(np.full(3, -1.0))
    other = Net()
    np.testing.assert_array_equal(cf(other, x), other.forward(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_update_of_an_attribute(backend):
    def step(x):
        M.w += 1  # in place into M.w; M.w stays the same array
        return x + M.w * 2

    M.w = np.zeros(3)
    w0 = M.w
    cf = npc.compile(step, backend=backend)
    x = np.arange(3.0)
    want = [x + 2 * np.full(3, i + 1.0) for i in range(3)]
    for i in range(3):
        np.testing.assert_array_equal(cf(x), want[i])
    assert M.w is w0 and isinstance(M.w, np.ndarray)
    np.testing.assert_array_equal(M.w, np.full(3, 3.0))
    M.w = np.ones(3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unchanged_attributes_replay(backend):
    compiler.reset()
    m = Model(np.ones(3))
    cf = npc.compile(lambda x: x * m.w, backend=backend)
    x = np.arange(3.0)
    for _ in range(4):
        cf(x)
    assert compiler.stats()["traces"] == 1 and compiler.stats()["cache_hits"] == 3
    assert "__getattribute__" not in Model.__dict__  # the class is left as it was
