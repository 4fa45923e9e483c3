"""The NumPy fallback: any public NumPy name that npc does not implement natively resolves
to a wrapper that converts npc arrays to NumPy arrays (zero-copy), calls NumPy, and turns
NumPy arrays of native dtypes in the result back into npc arrays (zero-copy).
"""
import functools
import logging

import numpy as _np

from ._array import _from_numpy, ndarray

_log = logging.getLogger("npc.fallback")
_stats = {}
_logged = set()


class config:
    """Fallback switches (also exposed as npc.config.strict_fallback)."""
    strict_fallback = False


class FallbackError(RuntimeError):
    """Raised instead of running NumPy when ``npc.config.strict_fallback`` is set."""


def fallback_stats():
    """Number of calls served by NumPy, by name (dict: name -> count)."""
    return dict(_stats)


def to_numpy(x):
    """npc arrays (also inside lists, tuples and dicts) as zero-copy NumPy arrays."""
    if isinstance(x, ndarray):
        return _np.asarray(memoryview(x))
    if type(x) in (list, tuple):
        return type(x)(to_numpy(v) for v in x)
    if type(x) is dict:
        return {k: to_numpy(v) for k, v in x.items()}
    return x


def from_numpy(x):
    """NumPy arrays of native dtypes (also inside tuples and lists) as npc arrays."""
    if type(x) is _np.ndarray:
        return _from_numpy(x)
    if type(x) is tuple:
        return tuple(from_numpy(v) for v in x)
    if type(x) is list:
        return [from_numpy(v) for v in x]
    return x


def record(name):
    if config.strict_fallback:
        raise FallbackError(f"npc: '{name}' would run on NumPy, but npc.config.strict_fallback is set")
    _stats[name] = _stats.get(name, 0) + 1
    if name not in _logged:
        _logged.add(name)
        _log.info("npc: %s runs on NumPy", name)


def wrap_function(name, fn):
    """A wrapper that runs NumPy's `fn` on converted arguments."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        record(name)
        return from_numpy(fn(*to_numpy(args), **to_numpy(kwargs)))
    wrapper.__npc_fallback__ = True
    return wrapper


def install(namespace):
    """Module-level __getattr__/__dir__ for npc: NumPy's names not defined natively."""
    def __getattr__(name):
        try:
            obj = getattr(_np, name)
        except AttributeError:
            raise AttributeError(f"module 'npc' has no attribute '{name}'") from None
        if callable(obj) and not isinstance(obj, type):
            w = wrap_function(name, obj)
            namespace[name] = w
            return w
        return obj

    def __dir__():
        return sorted(set(namespace) | set(dir(_np)))

    return __getattr__, __dir__
