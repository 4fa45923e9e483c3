"""numpy.ndarray subclasses (masked arrays, np.matrix, np.memmap, user subclasses) passed to
npc's eager functions run on NumPy: results, types, masks and errors are NumPy's
(Note [NumPy subclasses] in python/npc/_array.py, Note [subclass guard] in
python/npc/csrc/bind_interop.cpp)."""
import types
import warnings

import numpy as np
import pytest

import npc

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")

class Sub(np.ndarray):
    """A user subclass of numpy.ndarray that carries an attribute."""

    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", "default")


def _subjects(tmp_path=None):
    s = np.arange(6.).reshape(2, 3).view(Sub)
    s.info = "mine"
    out = {"masked": np.ma.masked_array([[1., 2., 3.], [4., 5., 6.]], mask=[[0, 1, 0], [1, 0, 0]]),
           "matrix": np.matrix([[1., 2.], [3., 4.]]), "sub": s}
    return out


def _same(r, e, values=True):
    """Same outcome: type (npc.ndarray standing for numpy.ndarray), values, mask."""
    if isinstance(r, npc.ndarray):
        assert type(e) is np.ndarray, (type(r), type(e))
        r = np.asarray(r)
    assert type(r) is type(e), (type(r), type(e))
    if isinstance(e, np.ma.MaskedArray):
        np.testing.assert_array_equal(np.asarray(np.ma.getmask(r)), np.asarray(np.ma.getmask(e)))
        np.testing.assert_array_equal(np.asarray(r.data), np.asarray(e.data))
    elif isinstance(e, np.ndarray):
        assert r.dtype == e.dtype and r.shape == e.shape
        if values:
            np.testing.assert_array_equal(np.asarray(r), np.asarray(e))
        if isinstance(e, Sub):
            assert r.info == e.info
    elif isinstance(e, tuple):
        assert len(r) == len(e)
        for x, y in zip(r, e):
            _same(x, y, values)
    else:
        assert repr(r) == repr(e)


def test_masked_sum_keeps_the_mask():
    m = np.ma.masked_array([1., 2., 3.], mask=[0, 1, 0])
    assert npc.sum(m) == 4.0
    assert npc.mean(m) == 2.0
    assert type(npc.add(m, 1)) is np.ma.MaskedArray


def test_matrix_keeps_matrix_semantics():
    a = np.matrix([[1., 2.], [3., 4.]])
    _same(npc.dot(a, a), np.dot(a, a))
    _same(npc.multiply(a, a), np.multiply(a, a))
    _same(npc.linalg.inv(a), np.linalg.inv(a))
    _same(npc.sum(a, axis=0), np.sum(a, axis=0))


def test_memmap_results_as_numpy(tmp_path):
    mm = np.memmap(tmp_path / "x.dat", dtype="f8", mode="w+", shape=(4,))
    mm[:] = [1, 2, 3, 4]
    e_mm = np.memmap(tmp_path / "y.dat", dtype="f8", mode="w+", shape=(4,))
    e_mm[:] = [1, 2, 3, 4]
    for f in ("sum", "cumsum", "sort", "concatenate"):
        args = ([mm, mm],) if f == "concatenate" else (mm,)
        eargs = ([e_mm, e_mm],) if f == "concatenate" else (e_mm,)
        _same(getattr(npc, f)(*args), getattr(np, f)(*eargs))
    _same(npc.add(mm, 1), np.add(e_mm, 1))


_SKIP = {"memmap", "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "fromfile", "genfromtxt",
         "seterr", "setbufsize", "seterrcall", "set_printoptions", "printoptions", "show_config", "show_runtime",
         "info", "getbufsize", "geterr", "geterrcall", "get_printoptions", "fromregex"}


def _native_functions():
    for name in sorted(dir(np)):
        if name.startswith("_") or name in _SKIP:
            continue
        g, f = getattr(np, name), getattr(npc, name, None)
        if f is None or isinstance(g, (type, types.ModuleType)) or not callable(g):
            continue
        if id(f) in npc._fallback._FALLBACK_IDS or type(f) is npc._fallback.FallbackUfunc:
            continue
        yield name


# NumPy's results hold uninitialised memory.
_UNINITIALISED = {"empty_like"}
# NumPy 2.5 itself corrupts memory here (np.dstack of a matrix: __array_finalize__ raises
# inside concatenate, and a later garbage collection crashes): not called.
_NUMPY_CRASHES = {("dstack", "matrix")}


@pytest.mark.parametrize("kind", ["masked", "matrix", "sub"])
@pytest.mark.parametrize("name", list(_native_functions()))
def test_native_function_with_subclass_is_numpy(name, kind):
    """Every native npc function (and ufunc) called with a subclass: NumPy's outcome."""
    if (name, kind) in _NUMPY_CRASHES:
        pytest.skip("NumPy corrupts memory on this call")
    for nargs in (1, 2):
        a, b = _subjects()[kind], _subjects()[kind]
        args_e = (a,) * nargs
        args_r = (b,) * nargs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                e = getattr(np, name)(*args_e)
            except Exception as ex:  # noqa: BLE001 (any exception NumPy raises)
                with pytest.raises(type(ex)):
                    getattr(npc, name)(*args_r)
                continue
            r = getattr(npc, name)(*args_r)
        _same(r, e, values=name not in _UNINITIALISED)
        # In-place functions write into the caller's subclass as NumPy does.
        _same(b, a)
