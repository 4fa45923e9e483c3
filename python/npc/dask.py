"""npc arrays as the chunks of Dask arrays (docs/dask.md).

``import npc`` registers npc with Dask as soon as ``dask.array`` is (or gets) imported, without
importing Dask itself (python/npc/_dask_hook.py): npc.ndarray becomes a chunk type Dask wraps
and does not defer to, and Dask's per-type dispatch tables (concatenate, take, tensordot,
einsum, empty, percentile, to_numpy) get npc's functions. Every other NumPy function Dask
applies to a chunk reaches npc through ``__array_ufunc__``/``__array_function__``, and Dask's
meta machinery keeps npc chunks through NEP 35 ``like=``.

:func:`compile` makes a chunk function that runs npc's compiled (fused) code per chunk: use it
with ``dask.array.map_blocks``, ``blockwise`` or as the ``chunk=`` of
``dask.array.reduction``. Each process compiles it once, traces once per chunk shape, and
finds the kernels other processes compiled in the shared on-disk kernel cache.

Note [Dask registration]
Dask keeps a list of chunk types it handles itself (``register_chunk_type``); for any other
type with ``__array_ufunc__`` it returns NotImplemented, so ``dask_array + npc_array`` would
fail. Registration happens in every process that imports both npc and ``dask.array`` (the
client and each worker, whichever of the two it imports first), so dispatch on workers finds
npc's functions too. Importing this module imports Dask; ``import npc`` does not.
"""
import os
import threading

import numpy as _np

import dask
import dask.array as _da
from dask.array import backends as _backends
from dask.array import chunk_types as _chunk_types
from dask.array import dispatch as _dispatch

import npc as _npc
from ._array import ndarray as _ndarray

__all__ = ["register", "compile", "ChunkFunction", "NpcBackendEntrypoint", "stats", "reset"]

_registered = False


def register():
    """Registers npc.ndarray as a Dask chunk type and npc's functions in Dask's dispatch
    tables (idempotent; runs on its own when ``dask.array`` is imported, Note [Dask
    registration])."""
    global _registered
    if _registered:
        return
    if _ndarray not in _chunk_types._HANDLED_CHUNK_TYPES:
        _chunk_types.register_chunk_type(_ndarray)
    _dispatch.concatenate_lookup.register(_ndarray, _npc.concatenate)
    _dispatch.take_lookup.register(_ndarray, _npc.take)
    _dispatch.tensordot_lookup.register(_ndarray, _npc.tensordot)
    _dispatch.einsum_lookup.register(_ndarray, _npc.einsum)
    _dispatch.empty_lookup.register(_ndarray, _npc.empty)
    from dask.array.percentile import _percentile

    @_dispatch.percentile_lookup.register(_ndarray)
    def _npc_percentile(a, q, method="linear"):
        return _percentile(a, q, method)

    @_dispatch.to_numpy_dispatch.register(_ndarray)
    def _npc_to_numpy(data, **kwargs):
        return _np.asarray(data, **kwargs)

    _backends.array_creation_dispatch.register_backend("npc", NpcBackendEntrypoint())
    _registered = True


def _with_npc_meta(name, *args, meta=None, **kwargs):
    """dask.array.<name> making npc chunks (Dask's NumPy creation code with an npc meta)."""
    # A 1-d prototype (Dask reshapes it to the array's ndim): Dask takes the meta of a 0-d one
    # by indexing it, which gives a NumPy scalar.
    meta = _npc.empty((0,)) if meta is None else meta
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(_da, name)(*args, meta=meta, **kwargs)


class NpcBackendEntrypoint(_backends.ArrayBackendEntrypoint):
    """Dask's array backend "npc": with ``dask.config.set({"array.backend": "npc"})``,
    ``da.ones``, ``zeros``, ``empty``, ``full``, ``arange`` and ``da.random`` make npc chunks,
    and ``x.to_backend("npc")`` converts a Dask array's chunks to npc arrays (zero-copy)."""

    @classmethod
    def to_backend_dispatch(cls):
        return _npc.asarray

    @classmethod
    def to_backend(cls, data, **kwargs):
        if isinstance(data._meta, _ndarray):
            return data
        meta = _npc.empty((0,) * data.ndim, dtype=data.dtype)
        return data.map_blocks(_npc.asarray, meta=meta, **kwargs)

    @property
    def RandomState(self):
        return _npc.random.RandomState

    @property
    def default_bit_generator(self):
        return _np.random.PCG64

    @staticmethod
    def ones(*args, **kwargs):
        return _with_npc_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_npc_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_npc_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_npc_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, like=None, **kwargs):
        with dask.config.set({"array.backend": "numpy"}):
            return _da.arange(*args, like=_npc.empty((0,)) if like is None else like, **kwargs)


# ---------------------------------------------------------------- compiled chunk functions
_compiled = {}  # token -> npc.compile(fn, **options), one per process
_compiled_lock = threading.Lock()
_stats = {"calls": 0, "eager_meta_calls": 0}


def _has_empty_array(values):
    for v in values:
        if isinstance(v, (_ndarray, _np.ndarray)) and v.size == 0:
            return True
    return False


class ChunkFunction:
    """A function of chunks that runs compiled by npc (made by :func:`compile`).

    Calling it runs ``npc.compile(fn, **options)``, made once per process and looked up by a
    token of `fn` and `options` (an unpickled copy on a Dask worker finds the one made by an
    earlier task). Calls on empty arrays (Dask's meta computations) and calls with
    ``computing_meta=True`` (``dask.array.reduction``) run `fn` eagerly: nothing is traced or
    compiled for them.

    Instances pickle by value of `fn` (cloudpickle, as Dask sends functions) and tokenize
    deterministically for Dask's graph keys.
    """

    def __init__(self, fn, options=None, token=None):
        self.fn = fn
        self.options = dict(options or {})
        if token is None:
            token = dask.base.tokenize("npc.dask.compile", fn, sorted(self.options.items()))
        self.token = token
        self.__name__ = getattr(fn, "__name__", "chunk_function")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        if kwargs.pop("computing_meta", False) or _has_empty_array(args) or _has_empty_array(kwargs.values()):
            _stats["eager_meta_calls"] += 1
            return self.fn(*args, **kwargs)
        _stats["calls"] += 1
        return self.compiled()(*args, **kwargs)

    def compiled(self):
        """This process's compiled function (``npc.compile(fn, **options)``)."""
        f = _compiled.get(self.token)
        if f is None:
            with _compiled_lock:
                f = _compiled.get(self.token)
                if f is None:
                    f = _compiled[self.token] = _npc.compile(self.fn, **self.options)
        return f

    def __reduce__(self):
        return (ChunkFunction, (self.fn, self.options, self.token))

    def __dask_tokenize__(self):
        return ("npc.dask.ChunkFunction", self.token)

    def __repr__(self):
        return f"npc.dask.compile({self.__name__})"


def compile(fn=None, **options):
    """Compiles `fn` for Dask chunks: ``da.map_blocks(npc.dask.compile(fn), x, ...)``.

    Parameters
    ----------
    fn : callable
        A function of chunks (npc arrays; NumPy arrays work too) and Python values, written
        with NumPy calls. Usable as a decorator, with or without options.
    **options
        Passed to :func:`npc.compile` (``fullgraph``, ``backend``, ``dynamic``).

    Returns
    -------
    ChunkFunction
        Picklable; each Dask worker process compiles it once, traces it once per chunk
        shape, dtype and static arguments, and loads kernels that any process compiled
        before from the on-disk kernel cache (``npc.config.cache_dir``, shared safely by
        concurrent processes).

    Examples
    --------
    >>> import dask.array as da, npc, npc.dask
    >>> x = da.from_array(npc.ones((1000, 1000)), chunks=(250, 1000), asarray=False)
    >>> k = npc.dask.compile(lambda b: (npc.exp(b) * 2 - b).sum(axis=0, keepdims=True))
    >>> s = da.map_blocks(k, x, chunks=((1,) * 4, (1000,))).sum(axis=0)
    """
    if fn is None:
        return lambda f: ChunkFunction(f, options)
    return ChunkFunction(fn, options)


def stats():
    """Counters of this process (run on workers with ``client.run(npc.dask.stats)``).

    Returns
    -------
    dict
        ``calls`` and ``eager_meta_calls`` of :class:`ChunkFunction` objects,
        ``compiled_functions`` (ChunkFunctions compiled in this process), the compiler's
        ``traces``, ``cache_hits`` and ``recompiles`` (``npc.compiler.stats()``) and the fused
        backend's ``kernels``, ``compiles`` (C++ compiler runs) and ``disk_hits`` (kernels
        loaded from the disk cache).
    """
    c = _npc.compiler.stats()
    f = _npc._fusion.stats()
    return {"calls": _stats["calls"], "eager_meta_calls": _stats["eager_meta_calls"],
            "compiled_functions": len(_compiled), "traces": c.get("traces", 0),
            "cache_hits": c.get("cache_hits", 0), "recompiles": c.get("recompiles", 0),
            "kernels": f.get("kernels", 0), "compiles": f.get("compiles", 0),
            "disk_hits": f.get("disk_hits", 0), "pid": os.getpid()}


def reset():
    """Forgets this process's compiled chunk functions and resets the counters of
    :func:`stats` (``npc.compiler.reset()`` included: every trace cache is cleared)."""
    _stats["calls"] = _stats["eager_meta_calls"] = 0
    _npc.compiler.reset()
    _npc._fusion.reset_stats()
    _compiled.clear()


register()
