"""The NumPy fallback: every NumPy name and ndarray method works on npc, zero-copy, with
NumPy's values and dtypes; non-native dtypes and masked arrays stay NumPy; statistics,
logging and strict mode."""
import importlib
import os
import subprocess
import sys
import types
import warnings

import numpy
import pytest

import npc
from npc import _fallback
from _ulps import assert_close

NATIVE_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128"]
SUBMODULES = ["linalg", "fft", "random", "lib", "char", "ma", "polynomial", "testing", "emath",
              "strings", "rec", "exceptions", "dtypes", "ctypeslib"]


def public_names(mod):
    return [n for n in dir(mod) if not n.startswith("_")]


def same(np_value, npc_value):
    """Asserts equal values, dtypes and shapes (npc arrays compared through NumPy views)."""
    a, b = numpy.asarray(np_value), numpy.asarray(npc_value)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    assert numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), (a, b)


def shape_kinds(dtype):
    """(NumPy array, npc array over the same memory) per shape kind: 0-d, empty, 2-d,
    non-contiguous, negative strides, broadcast."""
    base = (numpy.arange(24) % 7 - 2).astype(dtype).reshape(4, 6)
    cases = {"0d": numpy.array(base[1, 2]), "empty": base[:0], "2d": base,
             "noncontig": base[:, ::2], "negstride": base[::-1, ::-2],
             "broadcast": numpy.broadcast_to(base[1], (3, 6))}
    return {k: (v, npc.asarray(v)) for k, v in cases.items()}


@pytest.fixture(autouse=True)
def _not_strict():
    npc.config.strict_fallback = False
    yield
    npc.config.strict_fallback = False


# ---------------------------------------------------------------- namespaces
def test_every_public_numpy_name_resolves():
    missing = []
    for name in public_names(numpy):
        try:
            getattr(npc, name)
        except AttributeError:
            missing.append(name)
    assert not missing


def test_dir_lists_numpy_namespace():
    assert set(public_names(numpy)) <= set(dir(npc))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy.char.chararray is deprecated
@pytest.mark.parametrize("sub", SUBMODULES)
def test_submodule_names_resolve(sub):
    np_mod = getattr(numpy, sub)
    mod = getattr(npc, sub)
    assert isinstance(mod, types.ModuleType) and mod.__name__ == "npc" + np_mod.__name__[5:]
    assert set(public_names(np_mod)) <= set(dir(mod))
    for name in public_names(np_mod):
        getattr(mod, name)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        npc.no_such_thing
    with pytest.raises(AttributeError):
        npc.linalg.no_such_thing


@pytest.mark.parametrize("sub,name", [("", "vectorize"), ("ma", "MaskedArray"), ("random", "Generator"),
                                      ("random", "BitGenerator"), ("polynomial", "Polynomial"),
                                      ("exceptions", "AxisError"), ("", "float64"), ("", "busdaycalendar")])
def test_classes_are_numpys_unless_native(sub, name):
    mod, np_mod = (getattr(npc, sub), getattr(numpy, sub)) if sub else (npc, numpy)
    if name in vars(mod) and vars(mod)[name] is not getattr(np_mod, name):
        pytest.skip(f"npc{'.' + sub if sub else ''}.{name} is native")
    assert getattr(mod, name) is getattr(np_mod, name)  # isinstance checks keep working


def test_import_of_nested_submodules():
    import npc.lib.stride_tricks as st
    from npc.lib.stride_tricks import sliding_window_view
    from npc.polynomial.chebyshev import chebfit
    assert st.sliding_window_view is sliding_window_view
    assert chebfit.__name__ == "chebfit"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("npc.lib.does_not_exist")


def test_native_definition_replaces_fallback_by_name(monkeypatch):
    calls = []

    def det(a):
        calls.append(a)
        return 42.0
    monkeypatch.setattr(npc.linalg, "det", det, raising=False)
    assert npc.linalg.det(npc.eye(2)) == 42.0
    assert numpy.linalg.det(npc.eye(2)) == 42.0  # __array_function__ routes to it
    assert len(calls) == 2


# ---------------------------------------------------------------- function wrappers
def test_results_are_npc_arrays_zero_copy():
    a = npc.arange(12.0).reshape(3, 4)
    r = npc.diagonal(a)
    assert type(r) is npc.ndarray
    same(numpy.diagonal(numpy.arange(12.0).reshape(3, 4)), r)
    # The result is a view of a's memory (the wrapper did not copy).
    assert numpy.shares_memory(numpy.asarray(r), numpy.asarray(a))


def test_nested_arguments_are_converted():
    a, b = npc.arange(3), npc.arange(3, 6)
    same(numpy.block([[numpy.arange(3)], [numpy.arange(3, 6)]]), npc.block([[a], [b]]))
    r = npc.einsum("i,i->", a, b)
    assert r == 14 and type(r) is numpy.int64
    parts = npc.split(npc.arange(6), 3)
    assert type(parts) is list and all(type(p) is npc.ndarray for p in parts)


def test_named_tuple_results_keep_their_type():
    a = npc.array([[2.0, 1.0], [1.0, 3.0]])
    r = npc.linalg.eigh(a)
    ref = numpy.linalg.eigh(numpy.asarray(a))
    assert type(r) is type(ref)
    assert type(r.eigenvalues) is npc.ndarray
    same(ref.eigenvalues, r.eigenvalues)


@pytest.mark.parametrize("sub,fn,args", [
    ("linalg", "solve", ([[3.0, 1.0], [1.0, 2.0]], [9.0, 8.0])),
    ("fft", "fft", ([1.0, 2.0, 0.0, -1.0],)),
    ("lib.stride_tricks", "sliding_window_view", (numpy.arange(6.0), 3)),
    ("polynomial.polynomial", "polyfit", ([0.0, 1.0, 2.0], [1.0, 3.0, 7.0], 2)),
    ("emath", "sqrt", ([-4.0, 4.0],)),
])
def test_submodule_functions_match_numpy(sub, fn, args):
    np_fn = numpy
    npc_mod = npc
    for part in sub.split("."):
        np_fn = getattr(np_fn, part)
        npc_mod = getattr(npc_mod, part)
    np_args = [numpy.asarray(a) for a in args[:1]] + list(args[1:])
    npc_args = [npc.asarray(a) for a in args[:1]] + list(args[1:])
    expected = getattr(np_fn, fn)(*np_args)
    got = getattr(npc_mod, fn)(*npc_args)
    assert type(got) is npc.ndarray
    same(expected, got)


def test_random_legacy_functions():
    npc.random.seed(3)
    a = npc.random.rand(4)
    numpy.random.seed(3)
    same(numpy.random.rand(4), a)
    assert type(a) is npc.ndarray


def test_function_wrapper_converts_results():
    w = _fallback.wrap_function("npc.test_only_ravel", numpy.ravel)
    r = w(npc.arange(6).reshape(2, 3))
    assert type(r) is npc.ndarray and _fallback.is_fallback(w)
    same(numpy.arange(6), r)
    assert w.__module__ == "npc" and w.__qualname__ == "test_only_ravel"


def test_testing_accepts_npc_arrays():
    npc.testing.assert_allclose(npc.arange(3.0), [0.0, 1.0, 2.0])
    with pytest.raises(AssertionError):
        npc.testing.assert_array_equal(npc.arange(3), npc.arange(1, 4))


def test_out_argument_returns_the_npc_object():
    a = npc.arange(6.0).reshape(2, 3)
    out = npc.zeros(3)
    r = npc.cumsum(npc.arange(3.0), out=out)
    assert r is out
    same(numpy.cumsum(numpy.arange(3.0)), out)
    r = a.sum(axis=0, out=out)
    assert r is out
    same(numpy.arange(6.0).reshape(2, 3).sum(axis=0), out)


def test_fallback_ufunc_proxy():
    # A ufunc npc does not run natively (datetime-only isnat always falls back), and a
    # proxy made for a numeric one.
    assert isinstance(npc.isnat, _fallback.FallbackUfunc)
    d = npc.array(["2024-01-01", "NaT"], dtype="datetime64[D]")
    assert npc.isnat(d).tolist() == [False, True]
    uf = _fallback.FallbackUfunc("npc.ldexp", numpy.ldexp)
    assert uf.nin == 2 and uf.nout == 1 and uf.__name__ == "ldexp" and uf.types == numpy.ldexp.types
    got = uf(npc.array([1.0, 2.0]), npc.array([1, 2]))
    assert type(got) is npc.ndarray
    same(numpy.ldexp([1.0, 2.0], [1, 2]), got)
    assert repr(uf) == "<ufunc 'ldexp'>"
    out = npc.empty(2)
    assert uf(npc.array([1.0, 2.0]), npc.array([1, 2]), out) is out
    same(numpy.array([2.0, 8.0]), out)


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64", "uint8", "bool"])
def test_ufunc_machinery_fallback(dtype):
    x = (numpy.arange(12) % 5).astype(dtype)
    a = npc.asarray(x)
    # reduceat
    same(numpy.add.reduceat(x, [0, 4, 9]), numpy.add.reduceat(a, [0, 4, 9]))
    same(numpy.add.reduceat(x, [0, 4, 9]), npc.add.reduceat(a, [0, 4, 9]))
    # positional outputs
    o_np, o_npc = numpy.empty(12, dtype), npc.empty(12, dtype)
    numpy.add(x, x, o_np)
    r = npc.add(a, a, o_npc)
    assert r is o_npc
    same(o_np, o_npc)
    # exotic casting / subok / order
    same(numpy.multiply(x, 2, casting="unsafe", dtype="float32", order="F"),
         numpy.multiply(a, 2, casting="unsafe", dtype="float32", order="F"))
    same(numpy.square(x, subok=False), numpy.square(a, subok=False))


def test_gufunc_keywords_fallback():
    x = numpy.arange(24.0).reshape(2, 3, 4)
    a = npc.asarray(x)
    same(numpy.matmul(x, x.transpose(0, 2, 1), axes=[(1, 2), (1, 2), (1, 2)]),
         numpy.matmul(a, a.transpose(0, 2, 1), axes=[(1, 2), (1, 2), (1, 2)]))
    same(numpy.vecdot(x, x, axis=1), numpy.vecdot(a, a, axis=1))
    same(numpy.add(x, 1.0, signature=(None, None, "f8")), numpy.add(a, 1.0, signature=(None, None, "f8")))
    q_np, r_np = numpy.divmod(x, 5)
    q, r = npc.divmod(a, 5)
    same(q_np, q)
    same(r_np, r)
    m1, m2 = npc.empty((2, 3, 4)), npc.empty((2, 3, 4))
    res = numpy.modf(a / 7, m1, m2)
    assert res[0] is m1 and res[1] is m2
    same(numpy.modf(x / 7)[1], m2)


def test_ufunc_at_and_outer():
    x = numpy.zeros(5)
    a = npc.zeros(5)
    numpy.add.at(x, [0, 0, 3], 1.0)
    assert numpy.add.at(a, [0, 0, 3], 1.0) is None
    same(x, a)
    same(numpy.multiply.outer(numpy.arange(3), numpy.arange(4)),
         numpy.multiply.outer(npc.arange(3), npc.arange(4)))


# ---------------------------------------------------------------- non-native dtypes
@pytest.mark.parametrize("values,dtype", [
    (["a", "bc"], None), ([b"x", b"yz"], None), (["2024-01-01", "2024-03-01"], "datetime64[D]"),
    ([1, 2], "timedelta64[s]"), ([(1, 2.0), (3, 4.0)], [("a", "i4"), ("b", "f8")]),
    ([1, "x", None], object), ([1.5, 2.5], numpy.longdouble), ([1 + 1j], numpy.clongdouble),
])
def test_non_native_dtypes_stay_numpy(values, dtype):
    a = npc.array(values, dtype=dtype)
    ref = numpy.array(values, dtype=dtype)
    assert type(a) is numpy.ndarray and a.dtype == ref.dtype
    assert numpy.array_equal(a, ref) if ref.dtype.kind != "V" else a.tobytes() == ref.tobytes()
    b = npc.concatenate([a, a])
    assert type(b) is numpy.ndarray
    assert b.dtype == ref.dtype and b.shape == (2 * len(ref),)


def test_string_array_behaves_like_numpys():
    a = npc.array(["a", "b"])
    assert repr(a) == repr(numpy.array(["a", "b"]))
    same(numpy.char.upper(numpy.array(["a", "b"])), npc.char.upper(a))
    assert (a == "a").tolist() == [True, False]


def test_datetime_arithmetic_stays_numpy():
    d = npc.array(["2024-01-01", "2024-01-31"], dtype="datetime64[D]")
    delta = npc.diff(d)
    assert type(delta) is numpy.ndarray and delta.dtype == numpy.dtype("m8[D]")
    assert int(delta[0] / numpy.timedelta64(1, "D")) == 30


def test_masked_arrays_stay_masked():
    m = npc.ma.masked_invalid(npc.array([1.0, numpy.nan, 3.0]))
    assert isinstance(m, numpy.ma.MaskedArray)
    assert float(m.mean()) == 2.0
    r = m + npc.array([1.0, 1.0, 1.0])
    assert isinstance(r, numpy.ma.MaskedArray)
    assert r.mask.tolist() == [False, True, False]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy.matrix
def test_subclass_results_stay_numpy():
    m = numpy.asmatrix(numpy.eye(2))
    r = numpy.add(m, npc.ones((2, 2)))  # the protocol never hands a subclass to npc's kernels
    assert isinstance(r, numpy.matrix)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # numpy.matrix
def test_subclass_operands_of_operators_stay_numpy():
    r = npc.ones((2, 2)) * numpy.asmatrix(numpy.eye(2))
    assert isinstance(r, numpy.matrix)


def test_non_native_results_of_npc_inputs():
    a = npc.arange(3)
    s = npc.array2string(a)
    assert s == numpy.array2string(numpy.arange(3))
    assert npc.char.mod("%d", a).dtype.kind == "U"


# ---------------------------------------------------------------- ndarray methods
def test_every_ndarray_method_exists_on_npc():
    names = [n for n in dir(numpy.ndarray) if not n.startswith("_") or n in (
        "__add__", "__matmul__", "__getitem__", "__setitem__", "__eq__", "__lt__", "__neg__",
        "__abs__", "__invert__", "__divmod__", "__iadd__", "__contains__", "__round__")]
    missing = [n for n in names if not hasattr(npc.ndarray, n)]
    assert not missing


METHOD_CALLS = [
    ("sum", (), {}), ("sum", (), {"axis": 0}), ("mean", (), {}), ("max", (), {}), ("min", (), {"axis": -1}),
    ("argmax", (), {}), ("argmin", (), {}), ("cumsum", (), {}), ("cumprod", (), {"axis": 0}),
    ("prod", (), {}), ("std", (), {}), ("var", (), {"ddof": 0}), ("any", (), {}), ("all", (), {}),
    ("ravel", (), {}), ("flatten", (), {"order": "F"}), ("squeeze", (), {}), ("swapaxes", (0, -1), {}),
    ("clip", (0, 3), {}), ("round", (), {}), ("conj", (), {}), ("nonzero", (), {}), ("repeat", (2,), {}),
    ("take", ([0, -1],), {}), ("diagonal", (), {}), ("trace", (), {}), ("sort", (), {}), ("argsort", (), {}),
    ("searchsorted", (1,), {}), ("byteswap", (), {}), ("__abs__", (), {}), ("__neg__", (), {}),
    ("__add__", (1,), {}), ("__radd__", (2.5,), {}), ("__mul__", (3,), {}), ("__truediv__", (2,), {}),
    ("__floordiv__", (2,), {}), ("__mod__", (3,), {}), ("__pow__", (2,), {}), ("__eq__", (1,), {}),
    ("__lt__", (1,), {}), ("__ge__", (0,), {}), ("__and__", (1,), {}), ("__invert__", (), {}),
    ("__matmul__", (None,), {}), ("__contains__", (1,), {}), ("tolist", (), {}),
]


def _applicable(name, dtype, arr):
    kind = numpy.dtype(dtype).kind
    if name in ("__and__", "__invert__") and kind in "fc":
        return False
    if name in ("__neg__",) and kind == "b":
        return False
    if name in ("__mod__", "__floordiv__", "clip", "sort", "argsort", "searchsorted", "__lt__",
                "__ge__", "argmax", "argmin", "max", "min") and kind == "c":
        return name in ("sort", "argsort", "argmax", "argmin", "max", "min", "searchsorted")
    if name in ("argmax", "argmin", "max", "min") and arr.size == 0:
        return False
    if name in ("diagonal", "trace", "swapaxes") and arr.ndim < 2:
        return False
    if name in ("sort",) and arr.ndim == 0:
        return False
    if name in ("searchsorted",) and arr.ndim != 1:
        return False
    if name == "take" and arr.size == 0:
        return False
    if name == "__matmul__" and arr.ndim != 2:
        return False
    if name == "__pow__" and kind in "iu" and False:
        return False
    if name in ("__sub__",) and kind == "b":
        return False
    return True


# NumPy differences of the native methods other layers install (ufunc layer), by
# (METHOD_CALLS index, dtype): strict xfails, so a fix shows up as an unexpected pass.
_METHOD_XFAILS = {}  # every difference listed here has been fixed in the ufunc layer


def _method_params():
    params = []
    for i, (name, _, _) in enumerate(METHOD_CALLS):
        for dtype in NATIVE_DTYPES:
            marks = []
            if i in _METHOD_XFAILS and dtype in _METHOD_XFAILS[i][0]:
                marks.append(pytest.mark.xfail(strict=True, reason=_METHOD_XFAILS[i][1]))
            params.append(pytest.param(i, dtype, id=f"{name}{i}-{dtype}", marks=marks))
    return params


@pytest.mark.parametrize("index,dtype", _method_params())
def test_ndarray_methods_match_numpy(index, dtype):
    name, args, kwargs = METHOD_CALLS[index]
    for kind, (x, a) in shape_kinds(dtype).items():
        if not _applicable(name, dtype, x):
            continue
        call_args = (x.T,) if name == "__matmul__" else args
        npc_args = tuple(npc.asarray(v) if isinstance(v, numpy.ndarray) else v for v in call_args)
        with warnings.catch_warnings(record=True) as w_np:
            warnings.simplefilter("always")
            try:
                expected = getattr(x, name)(*call_args, **kwargs)
            except Exception as e:  # noqa: BLE001
                with pytest.raises(type(e)):
                    getattr(a, name)(*npc_args, **kwargs)
                continue
        if name == "sort":
            a = npc.asarray(x.copy()) if x.flags.writeable else npc.asarray(x)
        with warnings.catch_warnings(record=True) as w_npc:
            warnings.simplefilter("always")
            got = getattr(a, name)(*npc_args, **kwargs)
        assert [type(w.message) for w in w_np] == [type(w.message) for w in w_npc], (kind, name)
        # Native reductions agree within the project's ULP bounds (tests/_ulps.py).
        if isinstance(expected, tuple):
            for e, g in zip(expected, got):
                assert_close(name, e, g)
        elif isinstance(expected, numpy.ndarray):
            assert type(got) is npc.ndarray, (kind, name)
            assert_close(name, expected, got)
        else:
            assert type(expected) is type(got), (kind, name, expected, got)
            assert_close(name, expected, got)


def test_inplace_operators_mutate_and_return_self():
    x = numpy.arange(6.0)
    a = npc.arange(6.0)
    b = a
    a += 2
    x += 2
    assert a is b
    same(x, a)
    a *= npc.arange(6.0)
    x *= numpy.arange(6.0)
    same(x, a)
    with pytest.raises(numpy._core._exceptions._UFuncOutputCastingError if hasattr(
            numpy._core, "_exceptions") else TypeError):
        ai = npc.arange(3)
        ai += 1.5


def test_setitem_getitem_views_share_memory():
    a = npc.zeros((3, 4))
    row = a[1]
    row[:] = 7
    assert a.sum() == 28
    a[a > 5] = 1
    same(numpy.where(numpy.arange(12).reshape(3, 4) // 4 == 1, 1.0, 0.0), a)
    with pytest.raises(ValueError, match="delete"):
        del a[0]


def test_readonly_arrays_stay_readonly():
    x = numpy.arange(4.0)
    x.flags.writeable = False
    a = npc.asarray(x)
    assert not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        a += 1


def test_fallback_properties():
    x = numpy.arange(6).reshape(2, 3)
    a = npc.asarray(x)
    same(x.mT, a.mT)
    assert list(a.flat) == list(x.flat)
    a.flat[2] = 9
    assert x[0, 2] == 9
    assert a.ctypes.data == x.ctypes.data
    assert a.data.tobytes() == x.data.tobytes()


# ---------------------------------------------------------------- stats, logs, strict
def test_fallback_stats_count_calls():
    npc.reset_fallback_stats()
    a = npc.arange(3.0)
    words = npc.array(["a", "b"])  # str arrays always run on NumPy
    npc.char.upper(words)
    npc.char.upper(words)
    numpy.add(a, 1.0, signature=(None, None, "f8"))  # gufunc keywords always run on NumPy
    stats = npc.fallback_stats()
    assert stats["npc.char.upper"] == 2
    assert stats["npc.add"] == 1


def test_strict_fallback_raises():
    npc.config.strict_fallback = True
    with pytest.raises(npc.FallbackError, match="char.upper"):
        npc.char.upper(["a"])
    with pytest.raises(npc.FallbackError, match="npc.add"):
        numpy.add(npc.arange(3.0), 1.0, signature=(None, None, "f8"))


def test_config_patch_and_unknown_setting():
    with npc.config.patch(strict_fallback=True):
        assert npc.config.strict_fallback is True
    assert npc.config.strict_fallback is False
    with pytest.raises(AttributeError):
        npc.config.no_such_setting = 1
    with pytest.raises(AttributeError):
        npc.config.no_such_setting
    assert "strict_fallback" in npc.config.describe()


def test_logging_once_per_name():
    code = ("import npc\nw = npc.array(['a'])\nfor _ in range(3): npc.char.upper(w)\n"
            "npc.datetime_as_string(npc.array(['2024-01-01'], dtype='M8[D]'))\n")
    env = dict(os.environ, NPC_LOGS="fallback")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    lines = [l for l in r.stderr.splitlines() if "runs on NumPy" in l]
    assert sum("npc.char.upper" in l for l in lines) == 1
    assert sum("npc.datetime_as_string" in l for l in lines) == 1
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NPC_LOGS=""),
                       capture_output=True, text=True, check=True)
    assert "runs on NumPy" not in r.stderr


def test_logging_helper():
    from npc import _logging
    try:
        _logging.set_logs("fallback,-fallback,graph_breaks")
        assert not _logging.enabled("fallback") and _logging.enabled("graph_breaks")
        _logging.set_logs("all")
        assert _logging.enabled("anything")
    finally:
        _logging.set_logs(os.environ.get("NPC_LOGS", ""))


def test_byteswapped_results_stay_numpy():
    x = numpy.arange(3, dtype=">i4")
    r = _fallback.call("npc.ravel", numpy.ravel, (x,), {})
    assert type(r) is numpy.ndarray and r.dtype == numpy.dtype(">i4")
    unaligned = numpy.zeros(17, numpy.uint8)[1:].view(numpy.float64)
    r = _fallback.call("npc.ravel", numpy.ravel, (unaligned,), {})
    assert type(r) is npc.ndarray and r.dtype == numpy.float64


def test_generic_alias():
    alias = npc.ndarray[int, numpy.dtype[numpy.float64]]
    assert alias.__origin__ is npc.ndarray


def test_strict_fallback_from_environment():
    code = "import npc\ntry:\n    npc.char.upper(['a'])\nexcept npc.FallbackError:\n    print('strict')\n"
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NPC_STRICT_FALLBACK="1"),
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "strict"


# ---------------------------------------------------------------- formerly known differences
# (the ndarray constructor, the in-place setters and resize are native now; their full
# conformance tests are in tests/numpy_conformance/test_ndarray_ctor.py)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_shape_setter():
    a = npc.arange(6.0)
    a.shape = (2, 3)
    assert a.shape == (2, 3)
    assert "ndarray.shape" not in npc.fallback_stats()


def test_resize_in_place():
    a = npc.arange(4.0)
    a.resize(6, refcheck=False)
    assert a.shape == (6,)
    numpy.testing.assert_array_equal(numpy.asarray(a), [0, 1, 2, 3, 0, 0])
    assert "ndarray.resize" not in npc.fallback_stats()


def test_ndarray_constructor():
    a = npc.ndarray((2, 3), dtype=npc.float32)
    assert type(a) is npc.ndarray and a.shape == (2, 3) and a.dtype == numpy.float32


def test_calls_numpy_rejects_too_are_not_counted():
    # npc finds the argument error (min of an empty axis); NumPy, asked for its own message,
    # raises too: nothing ran on NumPy, so nothing is counted (Dask's meta inference does this).
    npc.reset_fallback_stats()
    with pytest.raises(ValueError, match="zero-size array"):
        npc.min(npc.empty((0, 3)), axis=0)
    with pytest.raises(ValueError, match="zero-size array"):
        numpy.min(npc.empty((0, 3)), axis=0)
    assert npc.fallback_stats() == {}
