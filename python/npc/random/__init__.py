"""npc.random: the namespace of numpy.random, with the same streams as NumPy.

`Generator` and `RandomState` are subclasses of NumPy's: they hold NumPy's own bit
generators (PCG64, MT19937, Philox, SFC64, and SeedSequence seeding are NumPy's objects),
and their most used samplers (random, integers, standard_normal, normal, uniform,
exponential, standard_exponential, choice, permutation, shuffle, bytes; for RandomState
rand, randn, randint, random_sample, ...) run in npc's C++ layer on that very bit
generator, through its C-level interface, returning npc arrays. Every other method runs
NumPy's on the same state, so a stream is the one NumPy gives for the seed whichever
way each call is served (see Note [random streams] in src/ops/random.cpp).

The module-level legacy functions (``npc.random.seed``, ``rand``, ``randn``, ...) draw from
NumPy's global RandomState, so ``npc.random`` and ``numpy.random`` calls share one stream
as they would in a NumPy program.

Functions defined natively in this package replace NumPy's name by name; every other name
of numpy.random resolves to a fallback that runs NumPy (see npc._fallback).
"""
import operator as _operator

import numpy as _np

from .. import _core
from .._array import ndarray as _ndarray
from .._fallback import NotNative as _NotNative, call as _fallback_call, install as _install

# Bit generators and seeding are NumPy's objects: their states are NumPy's by construction.
from numpy.random import (BitGenerator, SeedSequence, PCG64, PCG64DXSM, MT19937, Philox,  # noqa: F401
                          SFC64)

_NPGen = _np.random.Generator
_NPRS = _np.random.RandomState
_NATIVE = _core._random_available()
_FLOATS = (_np.dtype(_np.float64), _np.dtype(_np.float32))


def _shape_of(size):
    """`size` as a shape tuple, or NotNative for anything NumPy should judge."""
    if size is None:
        return None
    try:
        return (_operator.index(size),)
    except TypeError:
        pass
    try:
        shape = tuple(_operator.index(d) for d in size)
    except TypeError:
        raise _NotNative from None
    return shape


def _empty(shape, dtype):
    if any(d < 0 for d in shape):
        raise _NotNative  # NumPy's "negative dimensions" error
    return _core.empty(shape, _code(dtype), "C")


_CODES = {}


def _code(dtype):
    dt = _np.dtype(dtype)
    c = _CODES.get(dt)
    if c is None:
        from .._dtypes import code_of
        c = _CODES[dt] = code_of(dt)
    return c


def _scalar_float(x):
    """A Python float from a 0-d parameter; NotNative for arrays (NumPy broadcasts those)."""
    if type(x) is float:
        return x
    if isinstance(x, (int, _np.integer, _np.floating)) and not isinstance(x, bool):
        return float(x)
    if type(x) is _ndarray or isinstance(x, _np.ndarray):
        if x.ndim == 0 and x.dtype.kind in "iuf":
            return float(x[()])
    raise _NotNative


def _fallback_method(cls_name, np_cls, name):
    meth = getattr(np_cls, name)

    def method(self, *args, **kwargs):
        return _fallback_call(f"{cls_name}.{name}", meth, (self,) + args, kwargs)
    method.__name__ = name
    method.__qualname__ = f"{cls_name}.{name}"
    method.__doc__ = meth.__doc__
    return method


def _native_method(cls_name, np_cls):
    """Decorator: the native body, or NumPy's method on NotNative (a counted fallback)."""
    def deco(fn):
        name = fn.__name__
        meth = getattr(np_cls, name)

        def method(self, *args, **kwargs):
            if _NATIVE:
                try:
                    return fn(self, *args, **kwargs)
                except _NotNative:
                    pass
            return _fallback_call(f"{cls_name}.{name}", meth, (self,) + args, kwargs)
        method.__name__ = name
        method.__qualname__ = f"{cls_name}.{name}"
        method.__doc__ = (fn.__doc__ or "") + "\n\nNumPy's documentation:\n" + (meth.__doc__ or "")
        return method
    return deco


def _install_fallback_methods(cls, np_cls, cls_name):
    for name in dir(np_cls):
        if name.startswith("_") or name in cls.__dict__:
            continue
        attr = getattr(np_cls, name)
        if callable(attr) and not isinstance(attr, type):
            setattr(cls, name, _fallback_method(cls_name, np_cls, name))


def _bitgen(obj):
    """The BitGenerator of a Generator or RandomState (also NumPy's own instances)."""
    return obj.bit_generator if isinstance(obj, _NPGen) else obj._bit_generator


_random = _core._random
_PCG64 = _np.random.PCG64
_PCG64_SAMPLERS = {"uniform01", "uniform"}


def _fill(self, sampler, shape, dtype, *params):
    """Runs the C++ sampler named `sampler` (capsule, *params, out) under the bit
    generator's lock."""
    out = _empty(() if shape is None else shape, dtype)
    if out.size:
        bg = _bitgen(self)
        if type(bg) is _PCG64 and sampler in _PCG64_SAMPLERS:
            sampler += "_pcg64"  # NumPy's PCG64 exactly (not a subclass): its step is inlined
        with bg.lock:
            _random(sampler, bg.capsule, *params, out)
    return out


def _float_draws(self, sampler, size, dtype, out, *params):
    """Draws of `sampler` in a new float32/float64 array of shape `size` (a Python float
    when size is None); NotNative for out= or another dtype (NumPy handles those)."""
    dt = _np.dtype(dtype)
    if out is not None or dt not in _FLOATS:
        raise _NotNative
    shape = _shape_of(size)
    r = _fill(self, sampler, shape, dt, *params)
    return float(r[()]) if shape is None else r


def _bounds(low, high, dtype, endpoint):
    """(off, rng) of a bounded-integer draw as NumPy computes them; NotNative for array
    bounds or bounds that NumPy rejects (it raises its own error)."""
    if _np.ndim(low) != 0 or _np.ndim(high) != 0:
        raise _NotNative
    try:
        lo = int(_np.asarray(low))
        hi = int(_np.asarray(high))
    except (TypeError, ValueError):
        raise _NotNative from None
    if not endpoint:
        hi -= 1
    dt = _np.dtype(dtype)
    if dt == _np.bool_:
        lb, ub = 0, 1
    else:
        info = _np.iinfo(dt)
        lb, ub = int(info.min), int(info.max)
    if lo < lb or hi > ub or lo > hi:
        raise _NotNative
    bits = dt.itemsize * 8
    return lo % (1 << bits), hi - lo


_INT_DTYPES = {_np.dtype(t) for t in (_np.int8, _np.int16, _np.int32, _np.int64, _np.uint8, _np.uint16,
                                        _np.uint32, _np.uint64, _np.bool_)}


class Generator(_NPGen):
    """numpy.random.Generator with npc's native samplers (same streams, npc arrays).

    Construct with a BitGenerator (``Generator(PCG64(seed))``) or use :func:`default_rng`.
    Native: random, integers, standard_normal, normal, uniform, exponential,
    standard_exponential, choice, permutation, shuffle, bytes (scalar parameters; array
    parameters, ``out=`` and every other method run NumPy's code on the same state).
    """

    def __reduce__(self):
        # NumPy's reduce names its own constructor; npc's class keeps draws npc arrays after
        # pickle.loads and copy.deepcopy. The bit generator (with its state) is pickled as is.
        _, args, state = super().__reduce__()
        return (Generator, args, state)

    @_native_method("Generator", _NPGen)
    def random(self, size=None, dtype=_np.float64, out=None):
        """Uniform floats in [0, 1) (numpy.random.Generator.random)."""
        return _float_draws(self, "uniform01", size, dtype, out)

    @_native_method("Generator", _NPGen)
    def standard_normal(self, size=None, dtype=_np.float64, out=None):
        """Standard normal samples, ziggurat (numpy.random.Generator.standard_normal)."""
        return _float_draws(self, "standard_normal", size, dtype, out)

    @_native_method("Generator", _NPGen)
    def standard_exponential(self, size=None, dtype=_np.float64, method="zig", out=None):
        """Standard exponential samples (numpy.random.Generator.standard_exponential)."""
        if method not in ("zig", "inv"):
            raise _NotNative
        return _float_draws(self, "standard_exponential", size, dtype, out, method == "inv")

    @_native_method("Generator", _NPGen)
    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal samples loc + scale * Z (numpy.random.Generator.normal)."""
        loc = _scalar_float(loc)
        scale = _scalar_float(scale)
        if scale < 0:
            raise ValueError("scale < 0")
        if not scale >= 0:
            raise _NotNative  # NaN: NumPy's sampler returns NaN
        shape = _shape_of(size)
        r = _fill(self, "normal", shape, _np.float64, loc, scale)
        return float(r[()]) if shape is None else r

    @_native_method("Generator", _NPGen)
    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform samples in [low, high) (numpy.random.Generator.uniform)."""
        low = _scalar_float(low)
        high = _scalar_float(high)
        if not _np.isfinite(high - low):
            raise _NotNative  # NumPy: OverflowError "Range exceeds valid bounds"
        if high - low < 0:
            raise ValueError("high - low < 0")
        shape = _shape_of(size)
        r = _fill(self, "uniform", shape, _np.float64, low, high)
        return float(r[()]) if shape is None else r

    @_native_method("Generator", _NPGen)
    def exponential(self, scale=1.0, size=None):
        """Exponential samples scale * E (numpy.random.Generator.exponential)."""
        scale = _scalar_float(scale)
        if scale < 0:
            raise ValueError("scale < 0")
        if not scale >= 0:
            raise _NotNative
        shape = _shape_of(size)
        r = _fill(self, "exponential", shape, _np.float64, scale)
        return float(r[()]) if shape is None else r

    @_native_method("Generator", _NPGen)
    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        """Integers in [low, high) or [low, high] with Lemire's method
        (numpy.random.Generator.integers); every integer dtype and bool."""
        return _integers(self, low, high, size, dtype, endpoint, False)

    @_native_method("Generator", _NPGen)
    def bytes(self, length):
        """`length` random bytes (numpy.random.Generator.bytes)."""
        length = _operator.index(length)
        n = (length - 1) // 4 + 1
        r = _integers(self, 0, 4294967296, n, _np.uint32, False, False)
        return r._tobytes("C")[:length] if _np.little_endian else _np.asarray(r).astype("<u4").tobytes()[:length]

    @_native_method("Generator", _NPGen)
    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples from `a` (an int n means arange(n)) (numpy.random.Generator.choice);
        native with replacement and uniform probabilities."""
        if not replace or p is not None:
            raise _NotNative
        holder = [0]
        return _choice(self, a, size, axis,
                       lambda shape: _integers(self, 0, holder[0], shape, _np.int64, False, False), holder)

    @_native_method("Generator", _NPGen)
    def shuffle(self, x, axis=0):
        """Shuffles an npc array in place along `axis` (numpy.random.Generator.shuffle)."""
        if type(x) is not _ndarray or x.ndim == 0:
            raise _NotNative
        axis = _operator.index(axis)
        if not -x.ndim <= axis < x.ndim:
            raise _NotNative
        if x.size == 0:
            return None
        if axis % x.ndim:
            perm = list(range(x.ndim))
            perm[0], perm[axis % x.ndim] = perm[axis % x.ndim], perm[0]
            x = x.transpose(perm)
        bg = _bitgen(self)
        with bg.lock:
            _random("shuffle", bg.capsule, x)
        return None

    @_native_method("Generator", _NPGen)
    def permutation(self, x, axis=0):
        """A shuffled copy of `x`, or of arange(x) for an int (numpy.random.Generator.permutation)."""
        if isinstance(x, (int, _np.integer)) and not isinstance(x, bool):
            arr = _core.arange(0, int(x), 1, _code(_np.int64)) if int(x) > 0 else _empty((0,), _np.int64)
            Generator.shuffle(self, arr)
            return arr
        if type(x) is not _ndarray or x.ndim != 1 or axis not in (0, -1):
            raise _NotNative
        arr = x._copy("C")
        Generator.shuffle(self, arr)
        return arr


def _integers(self, low, high, size, dtype, endpoint, masked):
    if high is None:
        low, high = 0, low
    dt = _np.dtype(dtype) if dtype is not int else _np.dtype(_np.int64)
    if dt not in _INT_DTYPES or not dt.isnative:
        raise _NotNative
    shape = _shape_of(size)
    if shape is not None and 0 in shape:
        return _empty(shape, dt)
    off, rng = _bounds(low, high, dt, endpoint)
    r = _fill(self, "bounded", shape, dt, off, rng, masked)
    if shape is None:
        v = r[()]
        if dtype is bool or dtype is int:
            return dtype(v)
        return v
    return r


def _choice(self, a, size, axis, draw, holder):
    shape = _shape_of(size)
    if (type(a) is _ndarray or isinstance(a, _np.ndarray)) and a.ndim == 0 and a.dtype.kind in "iu":
        a = int(a[()])  # NumPy: a 0-d integer array is the population size, as an int
    if isinstance(a, (int, _np.integer)) and not isinstance(a, bool):
        pop = int(a)
        if pop <= 0:
            raise _NotNative
        holder[0] = pop
        idx = draw(() if shape is None else shape)
        return int(idx[()]) if shape is None else idx
    if type(a) is not _ndarray or a.ndim != 1 or axis not in (0, -1):
        raise _NotNative
    pop = a.shape[0]
    if pop == 0:
        raise _NotNative
    holder[0] = pop
    idx = draw(() if shape is None else shape)
    if shape is None:
        return a[int(idx[()])]
    return _core._take(a, idx, 0, "raise")


def default_rng(seed=None):
    """A :class:`Generator` on PCG64 seeded like numpy.random.default_rng(seed) (same stream).

    `seed`: None, an int, a sequence of ints, a SeedSequence, a BitGenerator (used as is),
    or a Generator (returned as is).
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, _NPGen):
        return Generator(seed.bit_generator)
    if isinstance(seed, BitGenerator):
        return Generator(seed)
    return Generator(PCG64(seed))


# ---------------------------------------------------------------- legacy RandomState
class RandomState(_NPRS):
    """numpy.random.RandomState (MT19937) with npc's native samplers; the same stream as
    NumPy's for the same seed or state (seed, get_state and set_state are NumPy's).

    Native: random_sample, random, rand, randn, standard_normal, normal, uniform, randint,
    choice (with replacement, uniform), permutation, shuffle (npc arrays); the rest runs
    NumPy's code on the same state.
    """

    def __reduce__(self):
        # As Generator.__reduce__: npc's class, NumPy's arguments and state (the state
        # dictionary carries the cached Gaussian, restored by NumPy's __setstate__).
        _, args, state = super().__reduce__()
        return (RandomState, args, state)

    @_native_method("RandomState", _NPRS)
    def random_sample(self, size=None):
        """Uniform floats in [0, 1) (numpy.random.RandomState.random_sample)."""
        shape = _shape_of(size)
        r = _fill(self, "uniform01", shape, _np.float64)
        return float(r[()]) if shape is None else r

    @_native_method("RandomState", _NPRS)
    def random(self, size=None):
        """Uniform floats in [0, 1) (numpy.random.RandomState.random)."""
        shape = _shape_of(size)
        r = _fill(self, "uniform01", shape, _np.float64)
        return float(r[()]) if shape is None else r

    @_native_method("RandomState", _NPRS)
    def rand(self, *args):
        """Uniform floats in [0, 1) of shape `args` (numpy.random.RandomState.rand)."""
        return RandomState.random_sample(self, None if not args else args)

    @_native_method("RandomState", _NPRS)
    def randn(self, *args):
        """Standard normal samples of shape `args` (numpy.random.RandomState.randn)."""
        return _legacy_normal(self, 0.0, 1.0, None if not args else args)

    @_native_method("RandomState", _NPRS)
    def standard_normal(self, size=None):
        """Standard normal samples, polar method (numpy.random.RandomState.standard_normal)."""
        return _legacy_normal(self, 0.0, 1.0, size)

    @_native_method("RandomState", _NPRS)
    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal samples loc + scale * Z (numpy.random.RandomState.normal)."""
        loc = _scalar_float(loc)
        scale = _scalar_float(scale)
        if scale < 0:
            raise ValueError("scale < 0")
        if not scale >= 0:
            raise _NotNative
        return _legacy_normal(self, loc, scale, size)

    @_native_method("RandomState", _NPRS)
    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform samples in [low, high) (numpy.random.RandomState.uniform)."""
        low = _scalar_float(low)
        high = _scalar_float(high)
        if not _np.isfinite(high - low):
            raise _NotNative
        shape = _shape_of(size)
        r = _fill(self, "uniform", shape, _np.float64, low, high)
        return float(r[()]) if shape is None else r

    @_native_method("RandomState", _NPRS)
    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high) with masked rejection (numpy.random.RandomState.randint)."""
        if dtype is int:
            dt = _np.dtype("long")
        else:
            dt = _np.dtype(dtype)
        r = _integers(self, low, high, size, dt, False, True)
        if size is None and (dtype is bool or dtype is int):
            return dtype(r)
        return r

    @_native_method("RandomState", _NPRS)
    def choice(self, a, size=None, replace=True, p=None):
        """Samples from `a` (numpy.random.RandomState.choice); native with replacement and
        uniform probabilities."""
        if not replace or p is not None:
            raise _NotNative
        holder = [0]
        return _choice(self, a, size, 0,
                       lambda shape: _integers(self, 0, holder[0], shape, _np.dtype("long"), False, True), holder)

    @_native_method("RandomState", _NPRS)
    def shuffle(self, x):
        """Shuffles an npc array in place along axis 0 (numpy.random.RandomState.shuffle)."""
        if type(x) is not _ndarray or x.ndim == 0:
            raise _NotNative
        if x.size == 0:
            return None
        bg = _bitgen(self)
        with bg.lock:
            _random("shuffle", bg.capsule, x)
        return None

    @_native_method("RandomState", _NPRS)
    def permutation(self, x):
        """A shuffled copy of `x`, or of arange(x) (numpy.random.RandomState.permutation)."""
        if isinstance(x, (int, _np.integer)) and not isinstance(x, bool):
            n = int(x)
            arr = _core.arange(0, n, 1, _code(_np.int64)) if n > 0 else _empty((0,), _np.int64)
            RandomState.shuffle(self, arr)
            return arr
        if type(x) is not _ndarray or x.ndim != 1:
            raise _NotNative
        arr = x._copy("C")
        RandomState.shuffle(self, arr)
        return arr


def _legacy_normal(self, loc, scale, size):
    shape = _shape_of(size)
    out = _empty(() if shape is None else shape, _np.float64)
    if out.size:
        bg = _bitgen(self)
        with bg.lock:
            # The cached second normal of the polar method lives in NumPy's RandomState;
            # read it, draw, and write it back with the bit generator's new state.
            st = _NPRS.get_state(self, legacy=False)
            has, g = _random("legacy_normal", bg.capsule, loc, scale, st["has_gauss"], st["gauss"], out)
            if has != st["has_gauss"] or g != st["gauss"]:
                st = bg.state
                _NPRS.set_state(self, {"bit_generator": st["bit_generator"], "state": st["state"],
                                       "has_gauss": has, "gauss": g})
    return float(out[()]) if shape is None else out


_install_fallback_methods(Generator, _NPGen, "Generator")
_install_fallback_methods(RandomState, _NPRS, "RandomState")


# ---------------------------------------------------------------- module-level legacy API
def _global():
    """NumPy's global RandomState (numpy.random.seed and friends act on it)."""
    return _np.random.mtrand._rand


def _legacy_fn(name):
    meth = getattr(RandomState, name)

    def fn(*args, **kwargs):
        return meth(_global(), *args, **kwargs)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = meth.__doc__
    return fn


for _name in ("random_sample", "random", "rand", "randn", "standard_normal", "normal", "uniform", "randint",
              "choice", "shuffle", "permutation"):
    globals()[_name] = _legacy_fn(_name)
ranf = sample = globals()["random_sample"]
del _name


def seed(seed=None):
    """Reseeds NumPy's global RandomState (numpy.random.seed): npc.random and numpy.random
    module-level functions share that stream."""
    _np.random.seed(seed)


def get_state(legacy=True):
    """numpy.random.get_state of the shared global RandomState."""
    return _np.random.get_state(legacy)


def set_state(state):
    """numpy.random.set_state of the shared global RandomState."""
    return _np.random.set_state(state)


__getattr__, __dir__ = _install(globals())
