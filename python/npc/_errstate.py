"""Floating-point error reporting under NumPy's own error state (numpy.errstate/seterr).

Kernels collect NumPy's four error kinds as flags; ``report`` turns them into exactly what
NumPy does for the same state: a RuntimeWarning "divide by zero encountered in <where>", a
FloatingPointError, a call to the errcall function, a print, or a log write.
"""
import contextlib
import os
import threading
import warnings

import numpy as _np

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warn(msg):
    """RuntimeWarning attributed to the user's line (the first frame outside npc), as NumPy's is."""
    try:
        warnings.warn(msg, RuntimeWarning, skip_file_prefixes=(_PKG_DIR,))
    except TypeError:  # Python < 3.12: the caller of the binding
        warnings.warn(msg, RuntimeWarning, stacklevel=2)


_KINDS = ((1, "divide", "divide by zero"), (2, "over", "overflow"), (4, "under", "underflow"),
          (8, "invalid", "invalid value"))


_renames = threading.local()


@contextlib.contextmanager
def renamed(op, name):
    """Within the block (on this thread), errors reported in ufunc `op` name ufunc `name`:
    numpy.degrees runs rad2deg's loops but NumPy's messages say 'degrees'."""
    old = getattr(_renames, "map", None)
    _renames.map = {op: name}
    try:
        yield
    finally:
        _renames.map = old


_compiled = threading.local()


@contextlib.contextmanager
def marking_compiled(log):
    """Within the block (on this thread), warnings that ``report_compiled`` appends to `log`
    (the list of a ``warnings.catch_warnings(record=True)``) are marked ``_npc_compiled``:
    npc.compile tells the errors of compiled kernels, which a replay raises again, from the
    warnings of the traced Python (Note [warnings of traced Python] in npc/compiler/_capture.py)."""
    old = getattr(_compiled, "log", None)
    _compiled.log = log
    try:
        yield
    finally:
        _compiled.log = old


def report_compiled(flags, where):
    """``report`` for the errors of a compiled graph or segment (Note [reporting compiled fp
    errors] in npc/csrc/bind_tracer.cpp)."""
    log = getattr(_compiled, "log", None)
    if log is None:
        return report(flags, where)
    n = len(log)
    try:
        return report(flags, where)
    finally:
        for w in log[n:]:
            w._npc_compiled = True


def report(flags, where):
    """Act on error `flags` (bits: 1 divide, 2 overflow, 4 underflow, 8 invalid) raised in `where`."""
    m = getattr(_renames, "map", None)
    if m:
        where = m.get(where, where)
    state = _np.geterr()
    for bit, key, text in _KINDS:
        if not flags & bit:
            continue
        mode = state[key]
        if mode == "ignore":
            continue
        msg = f"{text} encountered in {where}"
        if mode == "warn":
            _warn(msg)
        elif mode == "raise":
            raise FloatingPointError(msg)
        elif mode == "print":
            print(f"Warning: {msg}")
        elif mode == "call":
            fn = _np.geterrcall()
            if fn is None:
                # NumPy's message, with its two spaces before the ufunc's name.
                raise NameError(f"python callback specified for {text} (in  {where}) but no function found.")
            fn(text, flags)  # NumPy passes the bare kind ("divide by zero") and every raised flag
        elif mode == "log":
            log = _np.geterrcall()
            if log is None:
                raise NameError(f"log specified for {text} (in {where}) but no object with write method found.")
            log.write(f"Warning: {msg}\n")
