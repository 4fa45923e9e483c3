"""Functions with graph breaks whose traced calls are slower than eager calls run eagerly
(Note [slow graph breaks] in python/npc/compiler/_api.py), with the same results."""
import numpy as np
import pytest

import npc


def _many_breaks(x):
    # One break per iteration: float() of a traced value; small segments, many of them.
    total = 0.0
    for i in range(300):
        total += float(x[i % x.shape[0]] * 2.0)
    return np.asarray(total) + x


@pytest.fixture(autouse=True)
def _fresh():
    npc.compiler.reset()
    old = npc.config.eager_if_faster
    npc.config.eager_if_faster = True
    yield
    npc.config.eager_if_faster = old
    npc.compiler.reset()


def test_slow_break_function_runs_eagerly_with_numpy_results():
    x = np.linspace(0.0, 1.0, 7)
    cf = npc.compile(_many_breaks)
    want = _many_breaks(x)
    for _ in range(6):
        got = cf(x)
        np.testing.assert_array_equal(np.asarray(got), want)
    st = npc.compiler.stats()
    # call 1 compiles, calls 2-3 are timed traces, calls 4-5 are eager probes; tracing 300
    # segments costs far more than 300 NumPy scalar operations, so call 6 runs eagerly.
    assert st["eager_runs"] == 3, st
    assert st["traces"] == 3, st


def test_switch_off_keeps_every_call_traced():
    npc.config.eager_if_faster = False
    x = np.linspace(0.0, 1.0, 7)
    cf = npc.compile(_many_breaks)
    for _ in range(5):
        np.testing.assert_array_equal(np.asarray(cf(x)), _many_breaks(x))
    st = npc.compiler.stats()
    assert st["eager_runs"] == 0 and st["traces"] == 5, st


def test_fast_break_functions_stay_traced():
    def f(x):
        if float(x.sum()) > 0:  # one break, tiny segments: well under the 2 ms floor
            return x + 1
        return x - 1
    x = np.ones(4)
    cf = npc.compile(f)
    for _ in range(6):
        np.testing.assert_array_equal(np.asarray(cf(x)), f(x))
    assert npc.compiler.stats()["eager_runs"] == 0


def _row_loop(a):
    # No break: one graph of ~2 * 400 tiny launches (element updates of a row loop).
    a = a.copy()
    for i in range(1, a.shape[0]):
        for j in range(1, a.shape[1]):
            a[i, j] = a[i, j] * 0.5 + a[i - 1, j - 1]
    return a


def test_measured_replays_pick_the_faster_mode_with_numpy_results():
    x = np.random.default_rng(0).random((21, 21))
    cf = npc.compile(_row_loop)
    want = _row_loop(x)
    for _ in range(7):
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    st = npc.compiler.stats()
    # call 1 traces; calls 2-3 are timed replays; two timed eager calls may follow, and then
    # either every call replays or every call runs eagerly.
    assert st["traces"] == 1, st
    assert st["eager_runs"] in (0, 2, 4), st
