"""Values and writes in compiled functions follow program order: a value recorded before a
later write does not see it, and writes into a fresh result or a copy never reach the
caller's arrays (both backends, compared with NumPy running the same function)."""
import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, check


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-write-order")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def stacked_before_masked_write(a):
    v0 = a[a > -100]
    v2 = v0 != np.average(a, axis=0)
    v4 = v0 + v0
    v5 = np.stack([v2, v4])
    v4[v4 < 0] = v0
    return v5


def read_then_eager_write(a):
    v = a[a > 0]          # a graph break: v is concrete from here on
    w = v * 2
    y = np.concatenate([w, a])
    w[:] = -1             # after y was recorded
    return y, w


def scaled_copy(a):
    v = a.copy()
    v[v < 0] *= 300
    return v[None]


def copy_then_break(a):
    v = a.copy()
    float(a.sum())        # a graph break with v live
    v += 1
    return v


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, x", [
    (stacked_before_masked_write, np.array([-3], np.int32)),
    (stacked_before_masked_write, np.array([-3, 4, -5], np.int32)),
    (read_then_eager_write, np.array([1.0, -2.0, 3.0])),
])
def test_value_recorded_before_a_write_does_not_see_it(f, x, backend):
    check(f, (x,), (x,), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, x", [
    (lambda a: np.around(a, 2), np.array([1.234 + 2.345j, -0.005 + 9.999j])),
    (np.triu, np.arange(18, dtype=np.float32).reshape(2, 3, 3)),
    (lambda a: np.nanstd(a[None], axis=0, ddof=1), np.array([1.0, 2.0])),
    (scaled_copy, np.array(-2.0)),
    (scaled_copy, np.array([-2.0, 3.0])),
    (copy_then_break, np.arange(3.0)),
])
def test_writes_into_fresh_values_stay_there(f, x, backend):
    # Writes into .real/.imag are not generated yet (the graph runs eagerly, with a warning).
    with npc.config.patch(codegen_errors="warn"):
        check(f, (x,), (x,), backend=backend, warn=False)


def write_one_argument_into_another(a0, a1, a2):
    a1[...] = a0
    a0[...] = a2


def swap_arguments(a, b):
    t = a.copy()
    a[...] = b
    b[...] = t


def rotate_through_views(a, b):
    b[::-1] = a
    a[:] = b * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(), (3,)])
def test_argument_written_into_another_keeps_its_initial_value(shape, backend):
    # Fuzz seed 400053: the eager backend wrote a0's new value (2) into a1, where NumPy's a1
    # gets a0's value before the write (Note [write-backs read before they write] in
    # src/tracer/interpret.cpp).
    a0, a1, a2 = np.full(shape, 1.0, np.float32), np.full(shape, 5.0, np.float32), np.full(shape, 2, np.uint8)
    check(write_one_argument_into_another, (a0, a1, a2), (a0 + 1, a1, a2 + 1), backend=backend)
    a, b = np.arange(3.0), np.arange(3.0, 6.0)
    check(swap_arguments, (a, b), (b, a), backend=backend)
    check(rotate_through_views, (a, b), (b, a), backend=backend)
