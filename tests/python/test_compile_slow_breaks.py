"""Functions with graph breaks whose traced calls are slower than eager calls run eagerly
(Note [slow graph breaks] in python/npc/compiler/_timing.py), with the same results."""
import numpy as np
import pytest

import npc
from npc.compiler._timing import _Timing, _probes_wanted, _typical


def _many_breaks(x):
    # One break per iteration: float() of a traced value; small segments, many of them.
    total = 0.0
    for i in range(300):
        total += float(x[i % x.shape[0]] * 2.0)
    return np.asarray(total) + x


@pytest.fixture(autouse=True)
def _fresh():
    # Each test measures in this process: decisions kept on disk by an earlier run (Note
    # [modes kept across processes]; tests/python/test_compile_mode_cache.py) stay unread.
    npc.compiler.reset()
    with npc.config.patch(eager_if_faster=True, mode_cache=False):
        yield
    npc.compiler.reset()


def test_slow_break_function_runs_eagerly_with_numpy_results():
    x = np.linspace(0.0, 1.0, 7)
    cf = npc.compile(_many_breaks)
    want = _many_breaks(x)
    for _ in range(6):
        got = cf(x)
        np.testing.assert_array_equal(np.asarray(got), want)
    st = npc.compiler.stats()
    # call 1 compiles, calls 2 and 5 are timed traces, calls 3 and 6 probes of NumPy's eager
    # mode, call 4 of npc's (Note [eager npc calls]); tracing 300 segments costs far more than
    # 300 scalar operations, but a gap is only decided on two calls of each mode.
    assert st["eager_runs"] == 3, st
    assert st["traces"] == 3, st
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    assert npc.compiler.stats()["traces"] == 3  # decided: eager from now on


def test_switch_off_keeps_every_call_traced():
    npc.config.eager_if_faster = False
    x = np.linspace(0.0, 1.0, 7)
    cf = npc.compile(_many_breaks)
    for _ in range(5):
        np.testing.assert_array_equal(np.asarray(cf(x)), _many_breaks(x))
    st = npc.compiler.stats()
    assert st["eager_runs"] == 0 and st["traces"] == 5, st


def _few_breaks(x):
    # Twenty breaks: a traced call takes well under a millisecond, an eager one microseconds.
    total = 0.0
    for i in range(20):
        total += float(x[i % x.shape[0]] * 2.0)
    return np.asarray(total) + x


def _tiny_op_chain(x):
    # No break: one fused kernel replayed, against 200 small eager operations.
    y = x
    for _ in range(100):
        y = y * 0.5 + 1.0
    return y


def _eager_runs_of_last(cf, x, want, calls):
    before = npc.compiler.stats()["eager_runs"]
    for _ in range(calls):
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    return npc.compiler.stats()["eager_runs"] - before


def test_short_slow_break_calls_are_measured_and_run_eagerly():
    # Calls of a fraction of a millisecond are compared too (no floor of milliseconds).
    x = np.linspace(0.0, 1.0, 7)
    cf = npc.compile(_few_breaks)
    want = _few_breaks(x)
    for _ in range(16):  # the compiling call, then alternating timed calls until decided
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    assert _eager_runs_of_last(cf, x, want, 4) == 4


def test_short_fast_compiled_calls_stay_compiled():
    x = np.linspace(0.0, 1.0, 16)
    cf = npc.compile(_tiny_op_chain)
    want = _tiny_op_chain(x)
    for _ in range(16):
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    assert npc.compiler.stats()["traces"] == 1
    assert _eager_runs_of_last(cf, x, want, 4) == 0


def _timing(traced, eager):
    t = _Timing()
    mode = None
    for a, b in zip(traced, eager):
        if mode is None:
            mode = t.add("traced", a)
        if mode is None:
            mode = t.add("eager", b)
    for a in traced[len(eager):]:
        if mode is None:
            mode = t.add("traced", a)
    return t


def test_rule_alternates_modes_and_compares_the_typical_calls():
    t = _Timing()
    assert t.next() == "traced"
    t.add("traced", 1e-3)
    assert t.next() == "eager"
    # Close times: the lower median of each mode counts, not the first or the mean.
    t = _timing([1.2e-3, 1.0e-3, 1.1e-3, 1.0e-3, 1.3e-3, 1.0e-3], [0.98e-3, 0.9e-3, 1.4e-3, 0.95e-3, 0.9e-3, 1.0e-3])
    assert t.mode == "eager" and len(t.eager) == _probes_wanted(_typical(t.traced))
    # Within the margin (under 3 percent): compiled code stays.
    t = _timing([1.0e-3] * 6, [0.99e-3] * 6)
    assert t.mode == "traced"
    # Not the fastest call either: eager calls that vary by themselves (BLAS threads) and are
    # fast only now and then lose to steady compiled calls.
    t = _timing([0.7e-3] * 6, [0.62e-3, 4.0e-3, 0.8e-3, 3.0e-3, 5.0e-3, 0.9e-3])
    assert t.mode == "traced"
    # One compiled call slowed by other load does not decide either.
    t = _timing([5.0e-3, 0.7e-3, 0.7e-3, 0.71e-3, 0.7e-3, 0.7e-3], [0.8e-3] * 6)
    assert t.mode == "traced"


def test_rule_short_calls_get_more_probes_long_calls_two():
    assert _probes_wanted(20e-3) == 2
    assert _probes_wanted(0.5e-3) > 2
    t = _timing([30e-3, 30e-3], [29e-3, 28e-3])
    assert t.mode == "eager" and len(t.traced) == len(t.eager) == 2
    t = _timing([0.5e-3, 0.5e-3], [0.49e-3, 0.48e-3])
    assert t.mode is None  # a short call close to its eager time: more probes


def test_rule_clear_gaps_decide_early():
    t = _timing([1e-3, 1e-3], [0.3e-3, 0.3e-3])
    assert t.mode == "eager"
    t = _timing([1e-3, 1e-3], [2e-3, 2e-3])
    assert t.mode == "traced"
    # An eager call far slower than the traced one is not repeated.
    t = _timing([1e-3], [5e-3])
    assert t.mode == "traced" and len(t.eager) == 1
    # Calls too short to time stay traced.
    t = _timing([1e-6, 1e-6], [])
    assert t.mode == "traced"


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
    for _ in range(14):
        np.testing.assert_array_equal(np.asarray(cf(x)), want)
    st = npc.compiler.stats()
    # call 1 traces; timed replays and eager calls alternate until one mode is chosen, and
    # then either every call replays or every call runs eagerly.
    assert st["traces"] == 1, st
    assert _eager_runs_of_last(cf, x, want, 4) in (0, 4)


def test_rule_with_two_eager_modes_takes_the_fastest():
    t = _Timing(("eager", "npc"))
    assert [t.next()] == ["traced"]
    t.add("traced", 1e-3)
    assert t.next() == "eager"
    t.add("eager", 2e-3)
    assert t.next() == "npc"
    assert t.add("npc", 0.4e-3) is None  # one call of each: no decision yet
    t.add("traced", 1e-3)
    t.add("eager", 2e-3)
    assert t.add("npc", 0.4e-3) == "npc" and min(t.eager) == 0.4e-3
    # Both eager modes far slower on their first call: compiled code, at once.
    t = _Timing(("eager", "npc"))
    t.add("traced", 1e-3)
    t.add("eager", 5e-3)
    assert t.add("npc", 4e-3) == "traced"
    # NumPy's loops faster than npc's and than traced calls: NumPy's.
    t = _Timing(("eager", "npc"))
    for _ in range(2):
        t.add("traced", 1e-3)
        t.add("eager", 0.3e-3)
        t.add("npc", 0.6e-3)
    assert t.mode == "eager"


def _updates(a, b, scale):
    # A break (float of a traced value), a write into an argument, the argument returned as is
    # next to new arrays in a tuple and a dict.
    a[0] += b.sum() * scale
    s = float(a[0])
    return a, (a * s, {"m": np.maximum(a, b)}), a.dtype


def test_npc_eager_mode_gives_numpy_results_and_writes(monkeypatch):
    # Note [eager npc calls]: decided for the "npc" mode, calls run on npc views of the NumPy
    # arguments and return what NumPy returns: numpy arrays, the caller's own argument object,
    # writes into arguments done in the caller's memory.
    monkeypatch.setattr(_Timing, "decide", lambda self: "npc" if self.times.get("npc") else None)
    cf = npc.compile(_updates)
    for call in range(6):
        a, b = np.arange(5.0), np.linspace(0.0, 1.0, 5)
        a2, b2 = a.copy(), b.copy()
        want = _updates(a2, b2, 0.5)
        got = cf(a, b, 0.5)
        assert got[0] is a
        np.testing.assert_array_equal(a, a2)
        assert type(got[1][0]) is np.ndarray and type(got[1][1]["m"]) is np.ndarray
        np.testing.assert_array_equal(got[1][0], want[1][0])
        np.testing.assert_array_equal(got[1][1]["m"], want[1][1]["m"])
        assert got[2] == want[2]
    assert cf._break_timing and all(t.mode == "npc" for t in cf._break_timing.values())


def _append_to(out, x):
    out.append(x * 2.0)
    return float(x.sum())


def test_npc_eager_mode_not_offered_when_a_list_argument_changes():
    cf = npc.compile(_append_to)
    x = np.arange(4.0)
    for _ in range(4):
        out = []
        assert cf(out, x) == 6.0
        assert type(out[0]) is np.ndarray
    assert cf._break_timing and all(t.alts == ("eager",) for t in cf._break_timing.values())
    # npc arguments: the function as it is runs npc already, one eager mode.
    fresh = npc.compile(_append_to)
    assert fresh._eager_modes(([], npc.asarray(x)), {}) == ("eager",)
    assert fresh._eager_modes(([], x), {}) == ("eager", "npc")
