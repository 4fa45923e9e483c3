"""npc.compile against eager NumPy where Python-level state meets the graph: numpy.errstate
inside compiled functions, strided arguments' geometry, ufunc.accumulate, lists read from
globals, captured globals seen by other threads, and masked read-modify-write warnings.
Every compiled call is compared with the same code run eagerly on NumPy: values, dtypes,
warnings (messages, in order) and exceptions (type and message)."""
import threading
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-semantics")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def outcome(fn, *args, errstate=None):
    """(result or (exception type, message), warning messages) of fn(*args) under `errstate`."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(**(errstate or {})):
            try:
                r = fn(*args)
            except Exception as e:  # noqa: BLE001  (compared with eager's)
                r = (type(e), str(e))
    return r, [(m.category, str(m.message)) for m in w]


def same(got, want):
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], type):
        assert got == want
        return
    assert type(got) is type(want), (type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def same_outcome(cf, f, *args, errstate=None):
    got, gw = outcome(cf, *args, errstate=errstate)
    want, ww = outcome(f, *[np.copy(a) if isinstance(a, np.ndarray) else a for a in args], errstate=errstate)
    same(got, want)
    assert gw == ww


# ---------------------------------------------------------------- errstate inside the function
def log_ignoring_divide(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return y + np.sqrt(x - 1)


def divide_raising(x):
    y = np.log(x)
    with np.errstate(all="raise"):
        z = x / 1.0
        w = 1.0 / x
    return y + z + w


def seterr_inside(x):
    old = np.seterr(divide="ignore", invalid="ignore")
    y = np.log(x)
    np.seterr(**old)
    return y * 2


def nested(x):
    with np.errstate(invalid="ignore"):
        a = np.sqrt(x)
        with np.errstate(divide="raise"):
            b = x * 2
        c = np.log(x)
    return a + b + c


OUTER = [{}, {"invalid": "raise"}, {"all": "ignore"}, {"divide": "raise"}, {"all": "warn"}, {"over": "raise"}]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [log_ignoring_divide, divide_raising, seterr_inside, nested])
def test_errstate_inside_function_follows_numpy(fn, backend):
    cf = npc.compile(fn, backend=backend)
    x = np.array([0.0, -1.0, 2.0, 4.0])
    # The outer state changes between calls of the same compiled function: each segment runs
    # under the state around its operations on every call.
    for outer in OUTER + OUTER[::-1]:
        same_outcome(cf, fn, x, errstate=outer)


@pytest.mark.parametrize("backend", BACKENDS)
def test_errstate_outside_changes_between_replays(backend):
    f = lambda x: np.log(x) * 2  # noqa: E731
    cf = npc.compile(f, backend=backend)
    x = np.array([0.0, -1.0, 2.0])
    for outer in OUTER + OUTER[::-1]:
        same_outcome(cf, f, x, errstate=outer)
    s = compiler.stats()
    assert s["traces"] == 1 and s["graph_breaks"] == 0, s  # no errstate inside: one graph


def test_errstate_boundaries_are_graph_breaks():
    e = npc.explain(log_ignoring_divide)(np.array([1.0, 2.0]))
    assert e.graph_break_count == 2
    assert "numpy.errstate entered" in e.break_reasons[0] and "test_compile_semantics.py" in e.break_reasons[0]
    assert "numpy.errstate left" in e.break_reasons[1]
    with pytest.raises(compiler.GraphBreakError, match="numpy.errstate entered"):
        npc.compile(log_ignoring_divide, fullgraph=True)(np.array([1.0, 2.0]))


def test_errstate_unwinds_when_the_function_raises():
    def f(x):
        with np.errstate(all="raise"):
            return np.log(x)
    cf = npc.compile(f)
    before = np.geterr()
    for _ in range(2):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in log"):
            cf(np.array([0.0]))
        assert np.geterr() == before
