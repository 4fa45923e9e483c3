"""Python ints into arrays, NumPy's two conversions (Note [Python ints into arrays] in
python/npc/_array.py): numpy.full and numpy.full_like (copyto) and ndarray.fill, setitem
raise OverflowError "Python int too large to convert to C long" outside the C integer range
before NEP 50's "Python integer 300 out of bounds for int8"; a bool array's setter takes any
int's truth where copyto raises; float arrays take float(value). Eager npc, and compiled code
with both backends (tracing call and replay), against NumPy."""
import warnings

import numpy as np
import pytest

import npc
from npc import compiler

from _compile_diff import BACKENDS, assert_same_as_numpy


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-python-int-fill")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def full_like(x, v):
    return np.full_like(x, v)


def full(x, v):
    return np.full(3, v, x.dtype)


def full_default_dtype(x, v):
    return np.full(3, v) if -2 ** 63 <= v < 2 ** 64 else x


def setitem_all(x, v):
    y = x.copy()
    y[...] = v
    return y


def setitem_one(x, v):
    y = x.copy()
    y[1] = v
    return y


def fill(x, v):
    y = x.copy()
    y.fill(v)
    return y


FNS = [full_like, full, full_default_dtype, setitem_all, setitem_one, fill]
DTYPES = [np.int8, np.uint8, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_, np.float16,
          np.float32, np.float64, np.complex64]
VALUES = [2 ** 63, 2 ** 64, -2 ** 63 - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 300, -1, 2 ** 100, -2 ** 100,
          2 ** 1024, -2 ** 1024]


def _outcome(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(*args)
            r = (np.asarray(r).dtype, np.asarray(r).tolist())
        except Exception as e:  # noqa: BLE001  (compared with NumPy's)
            r = (type(e), str(e))
    return r, [(m.category, str(m.message)) for m in w]


@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_eager(fn, dt):
    x = np.zeros(3, dt)
    for v in VALUES:
        assert _outcome(fn, npc.asarray(x), v) == _outcome(fn, x, v), v


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dt", [np.int8, np.uint32, np.uint64, np.bool_, np.float16, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_compiled(fn, dt, backend):
    x = np.zeros(3, dt)
    with npc.config.patch(accumulated_recompile_limit=10 ** 6, recompile_limit=10 ** 6):
        for v in VALUES:
            compiler.reset()
            cf = npc.compile(fn, backend=backend)
            for _ in range(2):  # the tracing call and a replay
                assert_same_as_numpy(cf, fn, x, v)


@pytest.mark.parametrize("v", [2 ** 63, 2 ** 64, -2 ** 63 - 1, 300])
def test_bool_arrays(v):
    """The reported cases: np.full_like(bool array, 2**63) raises, b[...] = 2**63 and
    b.fill(2**64) store True."""
    b = np.zeros(3, bool)
    for fn in (full_like, full, setitem_all, fill):
        assert _outcome(fn, npc.asarray(b), v) == _outcome(fn, b, v), (fn.__name__, v)
