"""Protocols: __array__, __array_ufunc__, __array_function__, buffer, DLPack, pickle, copy,
mixed npc/NumPy operations (NEP 50), routing to native implementations, and acceptance by
SciPy and Matplotlib."""
import copy
import io
import pickle

import numpy
import pytest

import npc
from npc import _core, _fallback
from _ulps import assert_close

NATIVE_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"]


def same(np_value, npc_value):
    a, b = numpy.asarray(np_value), numpy.asarray(npc_value)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    assert numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), (a, b)


def layouts(dtype):
    base = (numpy.arange(24) % 9).astype(dtype).reshape(4, 6)
    return {"0d": numpy.array(base[1, 1]), "empty": base[:0], "contig": base, "noncontig": base[:, 1::2],
            "negstride": base[::-1, ::-1], "fortran": numpy.asfortranarray(base)}


def shares(a, b):
    return numpy.shares_memory(numpy.asarray(a), numpy.asarray(b))


@pytest.fixture(autouse=True)
def _not_strict():
    npc.config.strict_fallback = False
    yield
    npc.config.strict_fallback = False


# ---------------------------------------------------------------- __array__ and buffers
@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_array_is_zero_copy(dtype):
    for kind, x in layouts(dtype).items():
        a = npc.asarray(x)
        v = numpy.asarray(a)
        assert type(v) is numpy.ndarray and v.dtype == x.dtype and v.strides == x.strides, kind
        assert x.size == 0 or numpy.shares_memory(v, x), kind
        same(x, v)
        v2 = a.__array__()
        assert v2.base is a or x.size == 0
        assert v2.__array_interface__["data"][0] == a.__array_interface__["data"][0]
        assert memoryview(a).tobytes() == x.tobytes(order="A") or not a.flags.c_contiguous


def test_array_copy_keyword():
    a = npc.arange(4.0)
    c = numpy.array(a, copy=True)
    c[0] = 9
    assert a[0] == 0
    v = numpy.asarray(a, copy=False)
    v[0] = 5
    assert a[0] == 5
    with pytest.raises(ValueError, match="copy"):
        numpy.asarray(a, dtype=numpy.float32, copy=False)
    assert numpy.asarray(a, dtype=numpy.float32).dtype == numpy.float32
    assert a.__array__(numpy.int32).dtype == numpy.int32


def test_readonly_view_stays_readonly():
    x = numpy.arange(3.0)
    x.flags.writeable = False
    v = numpy.asarray(npc.asarray(x))
    assert not v.flags.writeable


def test_from_numpy_zero_copy_both_ways():
    x = numpy.arange(6.0)
    a = npc.asarray(x)
    a_view = npc.asarray(numpy.asarray(a))
    x[0] = 42
    assert a[0] == 42 and a_view[0] == 42


# ---------------------------------------------------------------- __array_ufunc__
# The single-output ufuncs of the op table: every unary one, and the binary ones with a
# float64 loop (the test's operands are float64 and float32).
_ROWS = [r for r in _core.op_table() if r.kind == 0 and r.nout == 1]
UNARY = [r.name for r in _ROWS if r.nin == 1]
BINARY = [r.name for r in _ROWS if r.nin == 2 and any(sig.startswith("dd->") for sig in r.loops.split())]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "complex128", "uint8"])
def test_numpy_unary_ufunc_on_npc(name, dtype):
    x = numpy.arange(1, 7).astype(dtype)
    uf = getattr(numpy, name)
    try:
        expected = uf(x)
    except TypeError as e:
        with pytest.raises(type(e)):
            uf(npc.asarray(x))
        return
    got = uf(npc.asarray(x))
    assert type(got) is npc.ndarray
    assert_close(name, expected, got)


@pytest.mark.parametrize("name", BINARY)
def test_numpy_binary_ufunc_mixed(name):
    x = numpy.arange(1.0, 7.0)
    y = numpy.arange(6, 0, -1).astype(numpy.float32)
    uf = getattr(numpy, name)
    for a, b in [(npc.asarray(x), y), (x, npc.asarray(y)), (npc.asarray(x), npc.asarray(y))]:
        got = uf(a, b)
        assert type(got) is npc.ndarray
        assert_close(name, uf(x, y), got)


def test_mixed_operators_return_npc_and_follow_nep50():
    x8 = numpy.array([100, 120], dtype=numpy.int8)
    a8 = npc.asarray(x8)
    for got, expected in [
        (x8 + a8, x8 + x8), (a8 + x8, x8 + x8), (numpy.float32(2) * npc.arange(3.0), numpy.float32(2) * numpy.arange(3.0)),
        (numpy.ones(2, numpy.float32) + npc.ones(2, npc.float16), numpy.ones(2, numpy.float32) + numpy.ones(2, numpy.float16)),
        (npc.ones(2, npc.float32) + 1.5, numpy.ones(2, numpy.float32) + 1.5),  # weak Python float
        (a8 + 1, x8 + 1), (numpy.int64(3) - a8, numpy.int64(3) - x8),
        (x8 < a8, x8 < x8), (x8 @ a8, x8 @ x8),
    ]:
        assert type(got) in (npc.ndarray, numpy.int8, numpy.int64) or isinstance(got, numpy.generic)
        if isinstance(expected, numpy.ndarray):
            assert type(got) is npc.ndarray
        same(expected, got)
    with pytest.raises(OverflowError):
        a8 + 1000  # NEP 50: Python int out of range for int8


def test_ufunc_methods_on_npc():
    x = numpy.arange(12.0).reshape(3, 4)
    a = npc.asarray(x)
    for method, args, kwargs in [("reduce", (), {"axis": 1}), ("accumulate", (), {}),
                                 ("reduce", (), {"axis": None, "keepdims": True}),
                                 ("reduceat", ([0, 2],), {"axis": 1})]:
        got = getattr(numpy.add, method)(a, *args, **kwargs)
        assert type(got) is npc.ndarray
        same(getattr(numpy.add, method)(x, *args, **kwargs), got)
    same(numpy.subtract.outer(x[0], x[1]), numpy.subtract.outer(a[0], a[1]))
    a2 = a.copy()
    numpy.multiply.at(a2, (0, [1, 1]), 3.0)
    x2 = x.copy()
    numpy.multiply.at(x2, (0, [1, 1]), 3.0)
    same(x2, a2)


def test_ufunc_out_and_where():
    x = numpy.arange(5.0)
    a = npc.asarray(x.copy())
    out = npc.full(5, -1.0)
    r = numpy.sqrt(a, out=out, where=a > 1)
    assert r is out
    expected = numpy.full(5, -1.0)
    numpy.sqrt(x, out=expected, where=x > 1)
    same(expected, out)
    np_out = numpy.zeros(5)
    r = numpy.add(a, 1, out=np_out)
    assert r is np_out
    same(x + 1, np_out)
    r = numpy.add(a, 1, out=(out,))
    assert r is out


class Foreign:
    """Another array type with its own __array_ufunc__: npc must defer (NEP 13)."""
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return "foreign"

    def __array_function__(self, func, types, args, kwargs):
        return "foreign"


def test_defers_to_foreign_types():
    a = npc.arange(3.0)
    assert numpy.add(a, Foreign()) == "foreign"
    assert numpy.concatenate([a, Foreign()]) == "foreign"


class OptOut:
    __array_ufunc__ = None

    def __radd__(self, other):
        return "reflected"


def test_opt_out_types_get_reflected_operators():
    assert npc.arange(3.0) + OptOut() == "reflected"


class Overrides:
    """A type that overrides ufuncs (as Dask arrays do) and also converts with __array__."""
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("overrides", ufunc.__name__, tuple(type(x).__name__ for x in inputs))

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("converted instead of deferring")


@pytest.mark.parametrize("lib", [numpy, npc])
def test_operators_let_types_that_override_ufuncs_decide(lib):
    # Note [foreign ufunc overrides]: operators give the type's __array_ufunc__ the call, as
    # numpy.ndarray's do, instead of converting the operand.
    a, o = lib.arange(3.0), Overrides()
    name = type(a).__name__
    assert a + o == ("overrides", "add", (name, "Overrides"))
    assert o - a == ("overrides", "subtract", ("Overrides", name))
    assert (a < o) == ("overrides", "less", (name, "Overrides"))
    assert a.__mul__(o) == ("overrides", "multiply", (name, "Overrides"))
    assert a.__rtruediv__(o) == ("overrides", "divide", ("Overrides", name))
    assert a @ o == ("overrides", "matmul", (name, "Overrides"))


# ---------------------------------------------------------------- routing to native
def test_array_ufunc_routes_to_native_by_name(monkeypatch):
    calls = []

    class FakeUfunc:
        def __call__(self, *args, **kwargs):
            calls.append(("call", args, kwargs))
            return "native"

        def reduce(self, *args, **kwargs):
            calls.append(("reduce", args, kwargs))
            return "native-reduce"

    monkeypatch.setitem(vars(npc), "hypot", FakeUfunc())
    a = npc.arange(3.0)
    assert numpy.hypot(a, 1.0) == "native"
    assert numpy.hypot(numpy.arange(3.0), a) == "native"
    # NumPy arrays of native dtypes reach the native ufunc as npc views; others go to NumPy.
    assert type(calls[-1][1][0]) is npc.ndarray and type(calls[-1][1][1]) is npc.ndarray
    n = len(calls)
    r = numpy.hypot(numpy.arange(3, dtype=numpy.longdouble), a)
    assert len(calls) == n and r.dtype == numpy.longdouble
    assert numpy.hypot.reduce(a) == "native-reduce"
    # Methods the native ufunc lacks run on NumPy.
    same(numpy.hypot.accumulate(numpy.arange(3.0)), numpy.hypot.accumulate(a))
    # Keywords of generalized ufuncs run on NumPy.
    same(numpy.hypot(numpy.arange(3.0), 1.0, signature="dd->d"), numpy.hypot(a, 1.0, signature="dd->d"))
    out = npc.empty(3)
    assert numpy.hypot(a, 1.0, out=out) is out
    assert calls[-1][2]["out"] is out


def test_native_may_decline_with_notnative(monkeypatch):
    def declines(*args, **kwargs):
        raise npc.NotNative
    monkeypatch.setitem(vars(npc), "cbrt", declines)
    monkeypatch.setitem(vars(npc), "flip", declines)
    same(numpy.cbrt(numpy.arange(4.0)), numpy.cbrt(npc.arange(4.0)))
    same(numpy.flip(numpy.arange(4.0)), numpy.flip(npc.arange(4.0)))


def test_array_function_routes_to_native_by_name(monkeypatch):
    monkeypatch.setitem(vars(npc), "ptp", lambda a, axis=None: ("native ptp", type(a)))
    assert numpy.ptp(npc.arange(3.0)) == ("native ptp", npc.ndarray)
    monkeypatch.setitem(vars(npc.fft), "fftshift", lambda x, axes=None: "native fftshift")
    assert numpy.fft.fftshift(npc.arange(4.0)) == "native fftshift"


def test_array_function_fallback_results():
    x = numpy.arange(6.0).reshape(2, 3)
    a = npc.asarray(x)
    for fn, args in [(numpy.concatenate, ([a, a],)), (numpy.stack, ([a, a],)), (numpy.linalg.matrix_transpose, (a,)),
                     (numpy.fft.rfft, (a,)), (numpy.einsum, ("ij,kj->ik", a, a)), (numpy.where, (a > 2, a, -a)),
                     (numpy.sort, (a[:, ::-1],)), (numpy.unique, (a,)), (numpy.lib.stride_tricks.sliding_window_view, (a, (2, 2)))]:
        np_args = tuple(numpy.asarray(v) if isinstance(v, npc.ndarray) else
                        [numpy.asarray(e) for e in v] if isinstance(v, list) else v for v in args)
        got = fn(*args)
        assert type(got) is npc.ndarray, fn
        same(fn(*np_args), got)
    assert type(numpy.array([1, 2], like=a)) is npc.ndarray
    assert numpy.shape(a) == (2, 3) and numpy.ndim(a) == 2


def test_array_function_with_subclass_keeps_numpy_semantics():
    m = numpy.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    r = numpy.concatenate([m, npc.arange(2.0)])
    assert isinstance(r, numpy.ma.MaskedArray)


def test_array_priority():
    assert npc.arange(3.0).__array_priority__ > numpy.empty(0).__array_priority__


# ---------------------------------------------------------------- DLPack
@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_dlpack_numpy_round_trip_shares_memory(dtype):
    for kind, x in layouts(dtype).items():
        a = npc.from_dlpack(x)
        assert type(a) is npc.ndarray and a.dtype == x.dtype and a.shape == x.shape, kind
        assert a.strides == x.strides or x.size <= 1, kind
        same(x, a)
        back = numpy.from_dlpack(a)
        same(x, back)
        if x.size:
            assert numpy.shares_memory(back, x) and shares(a, x), kind


def test_dlpack_writes_are_visible():
    x = numpy.zeros(4)
    a = npc.from_dlpack(x)
    numpy.asarray(a)[1] = 3
    assert x[1] == 3
    y = numpy.from_dlpack(a)
    y[2] = 5
    assert x[2] == 5
    assert npc.from_dlpack(a)._data_ptr == a._data_ptr


def test_dlpack_lifetime():
    a = npc.from_dlpack(numpy.arange(1000.0))  # the NumPy array has no other reference
    import gc
    gc.collect()
    assert float(numpy.asarray(a).sum()) == 499500.0
    cap = npc.arange(5.0).__dlpack__()
    del cap  # unconsumed capsule: its destructor frees the export
    y = numpy.from_dlpack(npc.arange(5.0) * 2)
    gc.collect()
    assert y.tolist() == [0, 2, 4, 6, 8]


def test_dlpack_readonly_and_versions():
    x = numpy.arange(3.0)
    x.flags.writeable = False
    a = npc.from_dlpack(x)
    assert not a.flags.writeable
    with pytest.raises(BufferError):
        a.__dlpack__()  # legacy capsules cannot signal read-only
    cap = a.__dlpack__(max_version=(1, 0))
    b = npc._core._from_dlpack(cap, a)
    assert not b.flags.writeable
    with pytest.raises(ValueError, match="consumed"):
        npc._core._from_dlpack(cap, a)
    assert not numpy.from_dlpack(a).flags.writeable


def test_dlpack_keywords():
    a = npc.arange(4.0)
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError):
        a.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(2, 0))
    c = npc.from_dlpack(a, copy=True)
    assert not shares(a, c)
    same(numpy.asarray(a), c)
    assert shares(a, npc.from_dlpack(a, copy=False))
    assert npc.from_dlpack(a, device="cpu")._data_ptr == a._data_ptr
    with pytest.raises(AttributeError):
        npc.from_dlpack([1, 2])


def test_dlpack_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a = npc.from_dlpack(t)
    assert a.dtype == numpy.float32 and a.shape == (2, 3)
    t[0, 0] = 7
    assert a[0, 0] == 7
    back = torch.from_dlpack(a)
    back[1, 1] = -1
    assert t[1, 1] == -1


# ---------------------------------------------------------------- pickle and copies
@pytest.mark.parametrize("dtype", NATIVE_DTYPES)
def test_pickle_and_copies(dtype):
    for kind, x in layouts(dtype).items():
        a = npc.asarray(x)
        for b in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
            assert type(b) is npc.ndarray, kind
            same(x, b)
            assert x.size == 0 or not shares(a, b)


def test_pickle_of_fallback_objects():
    assert pickle.loads(pickle.dumps(npc.ldexp)).__name__ == "ldexp"
    assert pickle.loads(pickle.dumps(npc.char.upper)) is npc.char.upper


def test_deepcopy_in_containers():
    a = npc.arange(3.0)
    d = copy.deepcopy({"a": a, "b": [a]})
    assert d["a"] is d["b"][0]  # memo respected


# ---------------------------------------------------------------- ecosystem
def test_scipy_accepts_npc_arrays():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    import scipy.signal
    import scipy.stats
    A = npc.array([[4.0, 1.0], [2.0, 3.0]])
    b = npc.array([1.0, 2.0])
    same(scipy_linalg.solve(numpy.asarray(A), numpy.asarray(b)), scipy_linalg.solve(A, b))
    same(scipy.signal.convolve(numpy.arange(5.0), numpy.ones(3)), scipy.signal.convolve(npc.arange(5.0), npc.ones(3)))
    r = scipy.stats.describe(npc.arange(10.0))
    assert r.mean == 4.5


def test_matplotlib_plots_npc_arrays():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure
    fig = Figure()
    ax = fig.add_subplot()
    x = npc.linspace(0, 1, 20)
    (line,) = ax.plot(x, x * x)
    ax.imshow(npc.arange(12.0).reshape(3, 4))
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    same(numpy.linspace(0, 1, 20) ** 2, line.get_ydata())


def test_fallback_wrappers_are_marked():
    assert _fallback.is_fallback(npc.char.upper)
    assert not _fallback.is_fallback(npc.array)


def test_native_without_numpys_keyword_falls_back(monkeypatch):
    def flip(m):  # a native version without NumPy's `axis`
        return "native flip"
    monkeypatch.setitem(vars(npc), "flip", flip)
    assert numpy.flip(npc.arange(3)) == "native flip"
    same(numpy.flip(numpy.arange(6).reshape(2, 3), axis=1), numpy.flip(npc.arange(6).reshape(2, 3), axis=1))

    def broken(m, axis=None):
        raise TypeError("genuine type error")
    monkeypatch.setitem(vars(npc), "flip", broken)
    with pytest.raises(TypeError, match="genuine"):
        numpy.flip(npc.arange(3), axis=0)


def test_setflags_reaches_the_npc_array():
    a = npc.arange(3.0)
    a.setflags(write=False)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    a.setflags(write=True)
    a[0] = 1
    assert a[0] == 1
    with pytest.raises(ValueError):
        a.setflags(uic=True)


def test_numpy_functions_write_through_views():
    a = npc.zeros((3, 3))
    numpy.fill_diagonal(a, 2.0)
    numpy.copyto(a[0], 5.0)
    numpy.put(a, [8], 7.0)
    expected = numpy.zeros((3, 3))
    numpy.fill_diagonal(expected, 2.0)
    expected[0] = 5.0
    expected.flat[8] = 7.0
    same(expected, a)
    b = npc.arange(10)
    npc.random.default_rng(0).shuffle(numpy.asarray(b))
    assert sorted(b.tolist()) == list(range(10)) and b.tolist() != list(range(10))
