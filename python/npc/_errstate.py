"""Floating-point error reporting under NumPy's own error state (numpy.errstate/seterr).

Kernels collect NumPy's four error kinds as flags; ``report`` turns them into exactly what
NumPy does for the same state: a RuntimeWarning "divide by zero encountered in <where>", a
FloatingPointError, a call to the errcall function, a print, or a log write.
"""
import warnings

import numpy as _np

_KINDS = ((1, "divide", "divide by zero"), (2, "over", "overflow"), (4, "under", "underflow"),
          (8, "invalid", "invalid value"))


def report(flags, where):
    """Act on error `flags` (bits: 1 divide, 2 overflow, 4 underflow, 8 invalid) raised in `where`."""
    state = _np.geterr()
    for bit, key, text in _KINDS:
        if not flags & bit:
            continue
        mode = state[key]
        if mode == "ignore":
            continue
        msg = f"{text} encountered in {where}"
        if mode == "warn":
            warnings.warn(msg, RuntimeWarning, stacklevel=3)
        elif mode == "raise":
            raise FloatingPointError(msg)
        elif mode == "print":
            print(f"Warning: {msg}")
        elif mode == "call":
            _np.geterrcall()(msg, bit)
        elif mode == "log":
            _np.geterrcall().write(f"Warning: {msg}\n")
