"""Compiled code warns in the program's order of the ops that raised, as NumPy does, also
when the graph computes a repeated expression once (Note [merged evaluations] in
src/tracer/graph.cpp): `b - b.mean(axis=0)` computed again inside `b.std(axis=0)` warns after
the std's mean, not next to the first subtraction."""
import warnings

import numpy as np
import pytest

import npc


def messages(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn(*args)
    return np.asarray(r), [(m.category, str(m.message)) for m in w]


def zscore(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def repeated(a):
    u = a * a            # overflow in multiply
    v = np.log(a - 1)    # divide by zero in log
    w = a * a            # the same product again: NumPy warns again, here
    return u + v + w


def repeated_sum(a):
    s = a.sum(axis=0)              # overflow in reduce
    q = np.sqrt(a[0] - 2)          # invalid in sqrt
    return s + q + a.sum(axis=0)   # overflow in reduce again


CASES = [
    (zscore, np.array([[-np.inf, 0, 0], [np.inf, 0, np.inf]])),
    (zscore, np.array([[np.inf, 1.0], [-np.inf, 2.0], [0.0, 4.0]])),
    (repeated, np.array([1e200, 1.0, 3.0])),
    (repeated_sum, np.array([[1e308, 1.0], [1e308, 2.0]])),
]


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_warnings_in_program_order(case, backend):
    fn, x = CASES[case]
    want_r, want = messages(fn, x)
    cf = npc.compile(fn, backend=backend)
    for _ in range(2):  # the tracing call, then a replay
        got_r, got = messages(cf, x)
        np.testing.assert_array_equal(got_r, want_r)
        assert got == want


@pytest.mark.parametrize("backend", ["fused", "eager"])
def test_first_error_in_program_order_raises(backend):
    # errstate(all="raise"): the first op in program order that raised is the error.
    fn, x = CASES[2]
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as want:
            fn(x)
        with pytest.raises(FloatingPointError) as got:
            npc.compile(fn, backend=backend)(x)
    assert str(got.value) == str(want.value)
