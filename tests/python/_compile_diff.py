"""Differential checks of npc.compile against NumPy running the same function: the result
(type, dtype, shape, values), the exception (type and message), the warnings (category and
message, in order) and what the function wrote into its array arguments, on the tracing
call and on replays (each call gets fresh copies of the arguments)."""
import warnings

import numpy as np

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


def _copy(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def outcome(fn, args):
    """(result or (exception type, message), warnings, arguments after the call)."""
    args = _copy(args)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            r = (type(e), str(e))
    return r, [(m.category, str(m.message)) for m in w], args


def _same_value(got, want, what):
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[0], type):
        assert type(got) is tuple and got == want, (what, got, want)
        return
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (what, got, want)
        for g, w in zip(got, want):
            _same_value(g, w, what)
        return
    assert type(got) is type(want), (what, type(got), type(want))
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w, err_msg=what)


def assert_same_as_numpy(cf, f, *args, warn=True):
    """cf(*args) and f(*args) agree: value, exception, warnings (unless `warn` is False) and
    the writes into the array arguments."""
    got, gw, gargs = outcome(cf, args)
    want, ww, wargs = outcome(f, args)
    _same_value(got, want, "result")
    for i, (g, w) in enumerate(zip(gargs, wargs)):
        if isinstance(w, np.ndarray):
            _same_value(g, w, f"argument {i} after the call")
    if warn:
        assert gw == ww, (gw, ww)


def check(f, *calls, backend, warn=True, **kw):
    """Compiles `f` with `backend` and compares each call (a tuple of arguments) with NumPy;
    the first call traces, the others replay or trace again."""
    compiler.reset()
    cf = npc.compile(f, backend=backend, **kw)
    for args in calls:
        assert_same_as_numpy(cf, f, *args, warn=warn)
    return cf
