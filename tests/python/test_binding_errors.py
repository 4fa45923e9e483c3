"""Every public npc function, fed Python ints beyond int64, None and strings in its argument
slots, raises the exception type NumPy raises (or succeeds where NumPy does): no pybind11
cast error (RuntimeError "Unable to cast Python instance...") reaches users (Note [integer
arguments] in python/npc/csrc/bind_ndarray.cpp, Note [argument errors] in bind_interop.cpp)."""
import inspect
import pickle
import signal
import types
import warnings

import numpy as np
import pytest

import npc

BAD = {"2**63": 2**63, "-2**63-1": -2**63 - 1, "None": None, "'a'": "a"}

# Not fed: I/O, global state, printing, and functions whose NumPy call with a huge count
# allocates or loops for a long time.
_SKIP = {"memmap", "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "fromfile", "genfromtxt",
         "seterr", "setbufsize", "seterrcall", "set_printoptions", "printoptions", "show_config", "show_runtime",
         "info", "getbufsize", "geterr", "geterrcall", "get_printoptions", "fromregex", "asmatrix", "bmat",
         "from_dlpack", "frompyfunc", "vectorize", "fromiter", "fromstring", "frombuffer", "array_repr",
         "array_str", "array2string", "format_float_positional", "format_float_scientific", "base_repr",
         "binary_repr", "busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
         "typename", "mintypecode", "require", "einsum", "einsum_path", "broadcast_shapes", "nested_iters",
         "may_share_memory", "shares_memory", "arange", "repeat", "tile", "empty", "empty_like", "resize", "diff"}

# Each case is fed: an npc function that accepts what NumPy rejects, or raises another
# exception type, fails the test.


class _Slow(Exception):
    pass


def _outcome(fn):
    def alarm(*_):
        raise _Slow
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        return "ok"
    except (_Slow, MemoryError):
        return None
    except Exception as e:  # noqa: BLE001 (the exception type is the outcome)
        return type(e).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _functions():
    for npc_mod, np_mod, q in ((npc, np, "npc"), (npc.linalg, np.linalg, "npc.linalg"), (npc.fft, np.fft, "npc.fft")):
        for n in sorted(dir(np_mod)):
            if n.startswith("_") or n in _SKIP:
                continue
            g, f = getattr(np_mod, n), getattr(npc_mod, n, None)
            if f is None or isinstance(g, (type, types.ModuleType)) or not callable(g):
                continue
            if id(f) in npc._fallback._FALLBACK_IDS or type(f) is npc._fallback.FallbackUfunc:
                continue
            yield f"{q}.{n}"


def _resolve(qualname, m):
    mod, _, name = qualname.rpartition(".")
    obj = m
    for part in mod.split(".")[1:]:
        obj = getattr(obj, part)
    return getattr(obj, name)


@pytest.mark.parametrize("qualname", list(_functions()))
def test_argument_errors_as_numpy(qualname):
    g = _resolve(qualname, np)
    f = _resolve(qualname, npc)
    try:
        has_axis = "axis" in inspect.signature(g).parameters
    except (TypeError, ValueError):
        has_axis = False
    found = set()
    for label, b in BAD.items():
        calls = [lambda m, h: h(b), lambda m, h: h(m.arange(6.).reshape(2, 3), b),
                 lambda m, h: h(m.arange(6.).reshape(2, 3), m.arange(6.).reshape(2, 3), b)]
        if has_axis:
            calls.append(lambda m, h: h(m.arange(6.).reshape(2, 3), axis=b))
        for slot, c in enumerate(calls):
            e = _outcome(lambda: c(np, g))
            if e is None:
                continue
            r = _outcome(lambda: c(npc, f))
            assert r != "RuntimeError", (qualname, slot, label)  # a leaked cast error
            if r != e:
                found.add((qualname, slot, label))
    assert not found


@pytest.mark.parametrize("call, error", [
    (lambda m: m.zeros(2**63), ValueError), (lambda m: m.ones((2, 2**64)), ValueError),
    (lambda m: m.zeros(2).reshape(2**63), ValueError), (lambda m: m.sum(m.zeros((2, 3)), axis=2**63), OverflowError),
    (lambda m: m.swapaxes(m.zeros((2, 3)), 0, 2**63), OverflowError),
    (lambda m: m.transpose(m.zeros((2, 3)), (2**63, 0)), ValueError),
    (lambda m: m.cumsum(m.zeros((2, 3)), 2**63), OverflowError), (lambda m: m.eye(2**63), ValueError),
    (lambda m: m.split(m.zeros(4), 0), ZeroDivisionError), (lambda m: m.hsplit(m.zeros(4), 0), ZeroDivisionError),
])
def test_issue_examples(call, error):
    with pytest.raises(error):
        call(np)
    with pytest.raises(error):
        call(npc)


def test_setstate_as_numpy():
    a = np.asfortranarray(np.arange(6.).reshape(2, 3))
    state = a.__reduce__()[2]
    b = npc.zeros(1)
    assert b.__setstate__(state) is None
    assert type(b) is npc.ndarray and b.flags.f_contiguous and b.flags.owndata
    np.testing.assert_array_equal(b, a)
    c = np.zeros(1)
    for bad in [(1, 2), (1, (2,), np.dtype("f8"), False, b"abc")]:
        with pytest.raises(Exception) as e_np:
            c.__setstate__(bad)
        with pytest.raises(type(e_np.value)):
            b.__setstate__(bad)
    r = pickle.loads(pickle.dumps(npc.arange(4.), protocol=5))
    assert type(r) is npc.ndarray and r.tolist() == [0, 1, 2, 3]


_a = lambda m: m.arange(6.).reshape(2, 3)  # noqa: E731


# Cases npc used to accept (or reject with another type) where NumPy raises: the exception
# type and message are NumPy's.
@pytest.mark.parametrize("call", [
    lambda m: m.isclose(_a(m), _a(m), -2**63 - 1), lambda m: m.allclose(_a(m), _a(m), -2**63 - 1),
    lambda m: m.isclose(_a(m), _a(m), 1e-5, 2**64),
    lambda m: m.around(_a(m), 2**63), lambda m: m.around(_a(m), -2**63 - 1), lambda m: m.round(_a(m), 2**63),
    lambda m: m.round(_a(m), -2**63 - 1), lambda m: m.round(_a(m), 2**31), lambda m: m.round(_a(m), -2**31 - 1),
    lambda m: _a(m).round(2**62),
    lambda m: m.trim_zeros(_a(m), axis=2**63), lambda m: m.trim_zeros(_a(m), axis=-2**63 - 1),
    lambda m: m.trim_zeros(_a(m), axis=5), lambda m: m.trim_zeros(_a(m), "fbf"),
    lambda m: m.clip(_a(m), 2**63), lambda m: m.clip(_a(m), -2**63 - 1), lambda m: m.clip(_a(m), 1),
    lambda m: m.clip(None), lambda m: m.clip(_a(m), None), lambda m: m.clip("a"),
    lambda m: m.clip(_a(m), 0, 1, min=0), lambda m: m.clip(_a(m) > 1), lambda m: m.clip(m.arange(3), 2**63, None),
    lambda m: m.matmul(_a(m), _a(m).T, 2**63), lambda m: m.matmul(_a(m), _a(m).T, -2**63 - 1),
    lambda m: m.matmul(_a(m), _a(m).T, "a"), lambda m: m.matmul(_a(m), _a(m).T, out=1.5),
    lambda m: m.nan_to_num(_a(m), "a"), lambda m: m.issubdtype(_a(m), None), lambda m: m.issubdtype(float, _a(m)),
    lambda m: m.linalg.tensorinv(2**63), lambda m: m.linalg.tensorinv(3.0), lambda m: _a(m).reshape(),
])
def test_rejected_as_numpy(call):
    with pytest.raises(Exception) as e_np:
        call(np)
    with pytest.raises(Exception) as e_npc:
        call(npc)
    assert type(e_npc.value) is type(e_np.value)
    assert str(e_npc.value) == str(e_np.value)


@pytest.mark.parametrize("call", [
    lambda m: m.round(_a(m), 2**31 - 1), lambda m: m.round(_a(m), -2**31), lambda m: m.round(_a(m), 400),
    lambda m: m.clip(_a(m)), lambda m: m.clip(_a(m), None, None), lambda m: m.clip(_a(m), min=1),
    lambda m: m.clip(_a(m), 0, 2**63), lambda m: _a(m).clip(1),
    lambda m: m.clip(m.array(1.5)), lambda m: m.matmul(_a(m), _a(m).T, None),
    lambda m: m.isclose(_a(m), _a(m), 2**63), lambda m: m.nan_to_num(_a(m), 0),
    lambda m: m.issubdtype(m.float32, m.floating), lambda m: m.trim_zeros(m.array([0., 1., 0.]), "b"),
])
def test_accepted_as_numpy(call):
    e, r = call(np), call(npc)
    assert type(r).__module__.split(".")[0] in ("npc", "numpy") or type(r) is bool
    assert type(np.asarray(r)) is np.ndarray and np.asarray(r).dtype == np.asarray(e).dtype
    np.testing.assert_array_equal(np.asarray(r), np.asarray(e))


def test_isclose_tolerance_warning_as_numpy():
    for m in (np, npc):
        with pytest.warns(RuntimeWarning, match="One of rtol or atol is not valid"):
            m.isclose(m.arange(3.), m.arange(3.), rtol=np.inf)
        with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
            m.isclose(m.arange(3.), m.arange(3.), atol=np.nan)
