"""npc: NumPy-compatible arrays in C++ with compilation built in.

``import npc as np`` runs NumPy code on npc's native kernels; whatever npc does not run
natively runs on real NumPy (see npc._fallback). dtypes, scalar types, error state and
print options are NumPy's own objects.
"""
import os as _os

import numpy as _np

from . import _blas_env  # noqa: F401  (before _core loads OpenBLAS: Note [OpenBLAS core type])
from . import _core

# npc's matmul/dot call the OpenBLAS that NumPy loaded, not a second one with its own thread
# pool (Note [one BLAS per process] in src/ops/blas.cpp).
_core._use_numpy_blas()
from ._array import ndarray, flagsobj
from ._dtypes import result_type, promote_types, can_cast, issubdtype
from ._creation import (array, asarray, asanyarray, ascontiguousarray, asfortranarray, empty, zeros,
                        ones, full, empty_like, zeros_like, ones_like, full_like, arange, linspace,
                        logspace, geomspace, eye, identity, frombuffer, fromfunction, copy)
from ._core import memory_stats, reset_peak_memory_stats

__version__ = "0.1.0"

# dtypes and scalar types are NumPy's objects (npc.float32 is numpy.float32).
from numpy import (dtype, bool_, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: E402
                   float16, float32, float64, complex64, complex128, intp, uintp, byte, ubyte, short,
                   ushort, intc, uintc, int_, uint, longlong, ulonglong, half, single, double,
                   longdouble, csingle, cdouble, clongdouble, generic, number, integer,
                   signedinteger, unsignedinteger, inexact, floating, complexfloating, str_, bytes_,
                   void, object_, datetime64, timedelta64, finfo, iinfo, errstate, seterr, geterr,
                   seterrcall, geterrcall, set_printoptions, get_printoptions, printoptions,
                   newaxis, pi, e, inf, nan, euler_gamma, little_endian, isdtype)

# --- ufuncs (src/ops; python/npc/_ufunc.py), reductions (_reductions.py), composites such as
# where, clip, round, isclose (_composites.py) and statistics (_statistics.py)
from ._ufunc import *  # noqa: E402,F401,F403
from ._reductions import *  # noqa: E402,F401,F403
from ._composites import *  # noqa: E402,F401,F403
from ._statistics import *  # noqa: E402,F401,F403
# --- indexing, shape manipulation, sorting, sets, histograms, differences (python/npc/_indexing.py,
# _shape.py, _sorting.py, _sets.py, _histograms.py, _differences.py)
from ._indexing import *  # noqa: E402,F401,F403
from ._sorting import *  # noqa: E402,F401,F403
from ._sets import *  # noqa: E402,F401,F403
from ._histograms import *  # noqa: E402,F401,F403
from ._differences import *  # noqa: E402,F401,F403
from ._shape import *  # noqa: E402,F401,F403
# --- median and quantiles (python/npc/_quantile.py)
from ._quantile import *  # noqa: E402,F401,F403
# --- matrix products (python/npc/_linalg.py; npc.linalg and npc.random are subpackages)
from ._linalg import *  # noqa: E402,F401,F403
from ._vectorize import vectorize  # noqa: E402
# --- protocols and interop (python/npc/_interop.py)
from ._interop import *  # noqa: E402,F401,F403
# --- compiler (src/tracer, src/fusion; python/npc/compiler)
from . import compiler  # noqa: E402,F401
from .compiler import compile, jit, explain  # noqa: E402,F401

# --- settings, logs and the NumPy fallback (python/npc/_config.py, _logging.py, _fallback.py)
from ._config import config  # noqa: E402
from . import _fusion  # noqa: E402,F401  (fused-backend settings in npc.config)
from ._fusion import CodegenError  # noqa: E402,F401
from ._logging import set_logs  # noqa: E402
from ._fallback import FallbackError, NotNative, fallback_stats, reset_fallback_stats  # noqa: E402
from . import linalg, fft, random, lib, char, ma, polynomial, testing  # noqa: E402,F401
from . import _fallback, _interop  # noqa: E402

# Last, once every layer has defined its native names: protocols on npc.ndarray, fallbacks
# for the numpy.ndarray methods still missing, and the module-level NumPy fallback.
_interop.install(globals())
# Calls with numpy.ndarray subclasses (masked arrays, matrix, ...) run on NumPy.
_interop.guard_subclasses(globals(), _np, "npc")
_interop.guard_subclasses(vars(linalg), _np.linalg, "npc.linalg")
_interop.guard_subclasses(vars(fft), _np.fft, "npc.fft")
_fallback.install_methods(ndarray)
_interop.guard_method_destinations(ndarray)  # NumPy out= arrays of methods: NumPy writes them
_interop.guard_subclass_results(ndarray)  # results of subclass instances keep the class
__getattr__, __dir__ = _fallback.install(globals(), "npc", _np)
# Type slots of npc.ndarray's hot paths (operators, indexing, len, shape/dtype/...), installed
# once every layer has set its methods (Note [fast slots] in python/npc/csrc/bindings.hpp).
_core._install_fast_paths(ndarray, globals())

# Dask: npc registers as a chunk type once dask.array is imported, never importing Dask itself
# (python/npc/_dask_hook.py, python/npc/dask.py).
from . import _dask_hook  # noqa: E402
_dask_hook.install()
