"""Traces kept across processes (config.trace_cache, Note [persisted traces] in
python/npc/compiler/_persist.py): a later process loads a function's first trace instead of
tracing, gives the results the traced process gave (and NumPy's), and never uses an entry
whose sources, globals, key or bytes changed."""
import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import npc
from npc.compiler import _persist, _reads
from npc.compiler._guards import portable_key

from _serialization import seal_cache_entry, share_kernels, user_dirs

USER_MODULE = '''
import datetime
import functools
import math
import operator
import os
import random
import sys
import time
import types
import numpy as np

SCALE = float(os.environ.get("UM_SCALE", "2.0"))
BUF = np.arange(6.0)
CFG = types.SimpleNamespace(k=3)


def helper(x):
    return x * SCALE


def loop_rows(A):
    A = A.copy()
    for i in range(1, A.shape[0]):
        A[i, :] = A[i, :] - 0.5 * A[i - 1, :] * SCALE
    return A


def tri(A, k):
    return np.tril(A, k) * 2, A.sum()


def pair(x, y, s):
    return (x * y).sum(), np.float32(3.0), x - y * s


def calls_helper(x):
    return helper(x) + 1


def transposed(F):
    return F @ F.T + 1


def captured(x):
    return x + BUF


def breaks(x):
    n = int(x.sum())
    return x * n


def draws(x):
    return x + np.random.default_rng(0).random(x.shape)


def attribute(x):
    return x * CFG.k


def _make_closure():
    obj = types.SimpleNamespace(k=4)

    def closure(x):
        return x * obj.k
    return closure


closure = _make_closure()

# Functions of one line share their name, file and line: the key tells them apart by code.
plus, times = (lambda x: x + 1), (lambda x: x * 3)


def _apply(op):
    def g(x):
        return op(x) - 1
    return g


g_plus, g_times = _apply(plus), _apply(times)

# Globals read in ways a kept trace must not miss, each from the environment.
Z = float(os.environ.get("UM_Z", "0.0"))
G = float(os.environ.get("UM_G", "2.0"))
T = (1, 2) if os.environ.get("UM_T", "int") == "int" else (1.0, 2.0)
CFG_DICT = {"k": G}
GET = CFG_DICT.get
N = 0


class Base:
    BK = G


class Derived(Base):
    pass


def _zsign(x):
    return x * Z


def negzero(x):
    return np.copysign(1.0, _zsign(x))   # -0.0 == 0.0, but not here


def _t(x):
    return x * np.array(T)


def tuple_types(x):
    return _t(x)   # (1, 2) == (1.0, 2.0), but not their dtype


def _g(x):
    return x * globals()["G"]


def via_globals(x):
    return _g(x)


def _inh(x):
    return x * Derived.BK


def inherited(x):
    return _inh(x)


def _get(x):
    return x * GET("k")


def bound_get(x):
    return _get(x)


def _bump(x):
    global N
    N += 1
    return x + N


def bump(x):
    return _bump(x)


# Values from outside the arguments and globals: the trace is not kept.
DATA = os.environ.get("UM_DATA", "")


def clock(x):
    return x + time.time()


def perf(x):
    return x + time.perf_counter()


def env_item(x):
    return x * float(os.environ["UM_E"])


def env_get(x):
    return x * float(os.getenv("UM_E", "1.0"))


def reads_file(x):
    with open(DATA) as f:
        return x * float(f.read())


def draws_python(x):
    return x + random.random()


def now(x):
    return x + datetime.datetime.now().microsecond


def loadtxt(x):
    return x * np.loadtxt(DATA)


def loads_npy(x):
    return x + np.load(DATA)


def _env_names():
    return ["UM_E"]


def env_map(x):
    return x * float(list(map(os.getenv, _env_names()))[0])


# sys.argv is a plain list: compared as globals are (a later process with other arguments
# traces again), read directly or through a helper that returns the module.
def argv_scale(x):
    return x * float(sys.argv[4])


def _the_sys():
    return sys


def argv_helper(x):
    return x * float(_the_sys().argv[4])


# Pure Python around the array code: kept.
class Poly:
    def __init__(self, coeffs):
        self.coeffs = list(coeffs)

    @staticmethod
    def weight(i):
        return 1.0 / (i + 1)

    def __call__(self, x):
        acc = 0.0 * x
        for i, c in enumerate(reversed(self.coeffs)):
            acc = acc * x + c * self.weight(i)
        return acc


def _roots(n):
    out = []
    for i in range(1, n + 1):
        out.append(math.sqrt(i))
    return out


def pure_python(x):
    rs = _roots(len(x))
    p = Poly(sorted(rs, reverse=True)[:3])
    total = functools.reduce(operator.add, rs, 0.0)
    names = {"a": 1, "b": 2}
    k = names.get("b", 0) + int("{}".format(3)) + max(abs(-2), min(5, 6)) + round(math.pi)
    return p(x) * total + sum(r for r, _ in zip(rs, range(3))) + k + math.hypot(3.0, 4.0) * x[0]


# What Python or npc reads without the code naming it, or state set at import, each from
# the environment (G): special methods, a class reached through a helper, a replaced NumPy
# or builtin function, NumPy's error and print state.
class Scaler:
    if G == 2.0:
        def __init__(self):
            self.k = 2.0
    else:
        def __init__(self):
            self.k = 5.0


def dunder_init(x):
    return x * Scaler().k


class Cfg:
    k = G


def _make_cfg():
    return Cfg()


def factory_attr(x):
    return x * _make_cfg().k


_np_sum = np.sum


def _sum2(a, axis=None):
    return _np_sum(a, axis=axis) * 2


def _round3(v, n=None):
    return 3


if G != 2.0:
    np.sum = _sum2
    import builtins
    builtins.round = _round3
    np.seterr(under="raise")
    np.set_printoptions(precision=3)


def patched_numpy(x):
    return x * np.sum(x)


def patched_builtin(x):
    return x * round(2.5)


def error_state(x):
    try:
        k = np.float64(1e-300) * np.float64(1e-300)
    except FloatingPointError:
        k = np.float64(-1.0)
    return x * (1.0 if k == 0.0 else 2.0)


def print_state(x):
    return x * len(np.array2string(np.array([1.0 / 3.0])))


def formats(x):
    return x * float("{0.environ[UM_G]}".format(os))


def attr_getter(x):
    return x * operator.attrgetter("BK")(Base)


def clock64(x):
    return x * float(np.datetime64("now").astype(np.int64) % 7)


def args_of(name):
    r = np.random.default_rng(1)
    A = r.random((12, 5))
    x, y = r.random(6), r.random(6)
    return {"loop_rows": (A,), "tri": (A[:5], 1), "pair": (x, y, 0.25), "calls_helper": (x,),
            "transposed": (np.asfortranarray(r.random((4, 3))),), "captured": (x,), "breaks": (x,),
            "draws": (x,), "attribute": (x,), "closure": (x,), "plus": (x,), "times": (x,), "g_plus": (x,),
            "g_times": (x,), "negzero": (x,), "tuple_types": (np.arange(2),), "via_globals": (x,),
            "inherited": (x,), "bound_get": (x,), "bump": (x,), "clock": (x,), "perf": (x,), "env_item": (x,),
            "env_get": (x,), "reads_file": (x,), "draws_python": (x,), "now": (x,), "loadtxt": (x,),
            "loads_npy": (x,), "env_map": (x,), "argv_scale": (x,), "argv_helper": (x,),
            "pure_python": (x,), "dunder_init": (x,), "factory_attr": (x,), "patched_numpy": (x,),
            "patched_builtin": (x,), "error_state": (x,), "print_state": (x,), "formats": (x,),
            "attr_getter": (x,), "clock64": (x,)}[name]
'''

DRIVER = '''
import pickle, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import npc
import usermod
out = {}
for name in sys.argv[2].split(","):
    fn = getattr(usermod, name)
    cf = npc.compile(fn)
    before = npc.compiler.stats()
    first = cf(*usermod.args_of(name))
    second = cf(*usermod.args_of(name))
    after = npc.compiler.stats()
    ref = fn(*usermod.args_of(name))
    out[name] = {"first": first, "second": second, "numpy": ref,
                 "loaded": after["traces_loaded"] - before["traces_loaded"],
                 "traces": after["traces"] - before["traces"]}
with open(sys.argv[3], "wb") as f:
    pickle.dump(out, f)
'''

KEPT = ["loop_rows", "tri", "pair", "calls_helper", "transposed", "plus", "times", "g_plus", "g_times"]
NOT_KEPT = ["captured", "breaks", "draws", "attribute", "closure"]


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace-cache-kernels")
    d.chmod(0o700)
    return d


@pytest.fixture
def user(tmp_path, kernel_cache):
    """A user's module and a runner of fresh processes that compile its functions."""
    mod, driver, cache = user_dirs(tmp_path, kernel_cache, USER_MODULE, DRIVER)

    def run(names, trace_cache=True, argv=(), log=None, **env):
        out = tmp_path / "out.pkl"
        e = dict(os.environ, NPC_CACHE_DIR=str(cache), NPC_SEGMENT_NODES="40", **env)
        e.pop("NPC_TRACE_CACHE", None)
        if trace_cache is not None:
            e["NPC_TRACE_CACHE"] = "1" if trace_cache else "0"
        if log is not None:
            e["NPC_LOGS"] = "guards"
        p = subprocess.run([sys.executable, str(driver), str(mod), ",".join(names), str(out),
                            *argv], env=e, check=True, timeout=600, stderr=subprocess.PIPE, text=True)
        if log is not None:
            log.append(p.stderr)
        share_kernels(cache, kernel_cache)
        with open(out, "rb") as f:
            return pickle.load(f)

    run.cache = cache
    run.module = mod / "usermod.py"
    return run


def _leaves(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _leaves(v)]
    return [r]


def _same(a, b):
    """The same result: types, dtypes, shapes and bytes."""
    la, lb = _leaves(a), _leaves(b)
    assert type(a) is type(b) and len(la) == len(lb)
    for x, y in zip(la, lb):
        assert type(x) is type(y), (type(x), type(y))
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _close_to_numpy(got, ref):
    lg, lr = _leaves(got), _leaves(ref)
    assert len(lg) == len(lr)
    for g, r in zip(lg, lr):
        assert type(g) is type(r), (type(g), type(r))
        assert np.asarray(g).dtype == np.asarray(r).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-12, atol=0)


def _traces(cache):
    return sorted(p for p in cache.iterdir() if p.suffix == ".trace")


def test_a_later_process_loads_the_first_trace(user):
    first = user(KEPT)
    assert len(_traces(user.cache)) == len(KEPT)
    second = user(KEPT)
    for name in KEPT:
        assert first[name]["loaded"] == 0 and first[name]["traces"] == 1, name
        assert second[name]["loaded"] == 1 and second[name]["traces"] == 0, name
        _same(first[name]["first"], second[name]["first"])
        _same(first[name]["second"], second[name]["second"])
        _close_to_numpy(second[name]["first"], second[name]["numpy"])


def test_on_by_default_and_off_by_environment(user):
    user(KEPT, trace_cache=False)
    assert _traces(user.cache) == []
    first = user(KEPT, trace_cache=None)
    assert len(_traces(user.cache)) == len(KEPT)
    second = user(KEPT, trace_cache=None)
    for name in KEPT:
        assert first[name]["loaded"] == 0 and second[name]["loaded"] == 1, name
        _same(first[name]["first"], second[name]["first"])


def test_compile_debugging_traces_and_dumps(user, tmp_path):
    user(["loop_rows"])
    dumps = tmp_path / "dumps"
    second = user(["loop_rows"], NPC_COMPILE_DEBUG="1", NPC_COMPILE_DEBUG_DIR=str(dumps))
    assert second["loop_rows"]["loaded"] == 0 and second["loop_rows"]["traces"] == 1
    assert any(p.name.startswith("guards") for d in dumps.iterdir() for p in d.iterdir())
    assert user(["loop_rows"])["loop_rows"]["loaded"] == 1


def test_functions_that_are_not_plain_are_not_kept(user):
    first = user(NOT_KEPT)
    assert _traces(user.cache) == []
    second = user(NOT_KEPT)
    for name in NOT_KEPT:
        assert second[name]["loaded"] == 0, name
        _same(first[name]["first"], second[name]["first"])
        _close_to_numpy(second[name]["first"], second[name]["numpy"])


def test_a_changed_source_file_traces_again(user):
    user(["calls_helper"])
    src = user.module.read_text().replace("return helper(x) + 1", "return helper(x) + 7")
    user.module.write_text(src)
    again = user(["calls_helper"])["calls_helper"]
    assert again["loaded"] == 0 and again["traces"] == 1
    _close_to_numpy(again["first"], again["numpy"])
    assert np.allclose(again["first"], np.asarray(again["numpy"]))
    assert user(["calls_helper"])["calls_helper"]["loaded"] == 1  # the new trace is kept


@pytest.mark.parametrize("name", ["calls_helper", "loop_rows"])
def test_a_changed_global_traces_again(user, name):
    # loop_rows reads SCALE itself (its guard key has the value), calls_helper through a
    # helper (the entry's globals have it).
    user([name], UM_SCALE="2.0")
    again = user([name], UM_SCALE="3.0")[name]
    assert again["loaded"] == 0 and again["traces"] == 1
    _close_to_numpy(again["first"], again["numpy"])
    # The entry of the new trace is kept (for calls_helper in place of the first: one entry
    # per guard key).
    assert user([name], UM_SCALE="3.0")[name]["loaded"] == 1


HIDDEN = ["negzero", "tuple_types", "via_globals", "inherited", "bound_get"]


def test_globals_that_differ_are_never_reused(user):
    user(HIDDEN, UM_Z="0.0", UM_G="2.0", UM_T="int")
    again = user(HIDDEN, UM_Z="-0.0", UM_G="5.0", UM_T="float")
    for name in HIDDEN:
        assert again[name]["loaded"] == 0, name
        _close_to_numpy(again[name]["first"], again[name]["numpy"])


UNSEEN = ["dunder_init", "factory_attr", "patched_numpy", "patched_builtin", "error_state", "print_state"]


def test_state_and_replaced_functions_that_differ_are_never_reused(user):
    first = user(UNSEEN, UM_G="2.0")
    assert len(_traces(user.cache)) == len(UNSEEN)
    again = user(UNSEEN, UM_G="5.0")
    for name in UNSEEN:
        assert first[name]["traces"] == 1 and again[name]["loaded"] == 0, name
        _close_to_numpy(again[name]["first"], again[name]["numpy"])
    assert user(UNSEEN, UM_G="2.0")["patched_numpy"]["loaded"] == 1


def test_reads_by_computed_names_in_calls_are_not_kept(user):
    user(["formats", "attr_getter", "clock64"], UM_G="2.0")
    assert _traces(user.cache) == []


def test_a_global_the_trace_changes_is_not_kept(user):
    user(["bump"])
    assert _traces(user.cache) == []


def _damage(kind, path):
    data = path.read_bytes()
    if kind == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0x10
        path.write_bytes(bytes(b))
    elif kind == "truncate":
        path.write_bytes(data[:len(data) // 3])
    elif kind == "resealed":
        # A changed payload with a valid trailer: the payload's own reader refuses it.
        b = bytearray(data[:-32])
        b[-40] ^= 0xFF
        path.write_bytes(seal_cache_entry(bytes(b), path.stem))
    elif kind == "writable":
        path.chmod(0o666)
    elif kind == "symlink":
        other = path.with_suffix(".real")
        path.rename(other)
        path.symlink_to(other)


@pytest.mark.parametrize("kind", ["flip", "truncate", "resealed", "writable", "symlink"])
def test_damaged_entries_are_not_used(user, kind):
    first = user(["loop_rows"])
    (path,) = _traces(user.cache)
    _damage(kind, path)
    again = user(["loop_rows"])["loop_rows"]
    assert again["loaded"] == 0 and again["traces"] == 1
    _same(first["loop_rows"]["first"], again["first"])


def test_other_arguments_are_other_entries(user):
    user(["tri"])
    src = user.module.read_text().replace('"tri": (A[:5], 1)', '"tri": (A[:5], 2)')
    user.module.write_text(src)  # (the file changed too: nothing of the first run is used)
    again = user(["tri"])["tri"]
    assert again["loaded"] == 0
    _close_to_numpy(again["first"], again["numpy"])


def test_the_loader_takes_plain_values_only():
    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))
    for obj in (Evil(), pytest, np.ndarray, {1: lambda: 0}.get):
        try:
            data = pickle.dumps(obj, protocol=4)
        except Exception:  # noqa: BLE001 - not picklable at all
            continue
        with pytest.raises(pickle.UnpicklingError):
            _persist._Loader(io.BytesIO(data)).load()
    for obj in ((1, 2.5, "s", b"b", None, True, 1j), [np.float32(2), np.dtype("<c16")], {"k": (int, np.int8)}):
        assert _persist._Loader(io.BytesIO(pickle.dumps(obj, protocol=4))).load() == obj


def test_keys_with_identities_are_not_portable():
    arr = np.zeros(3)
    assert portable_key(((("F",),), (), (), ()))
    assert portable_key((((11, (3,), 2, -1, "cpu", False),), (("global N", int, 3),), ("k",), ()))
    assert not portable_key(((("gen", 1234),), (), (), ()))
    assert not portable_key((((object, 1234),), (), (), ()))
    assert not portable_key(((), (("global A", id(arr), arr.dtype, arr.shape),), (), ()))
    assert not portable_key(((), (("global L", list, (("A", id(arr), arr.dtype, arr.shape),)),), (), ()))
    assert not portable_key(((), (("global L", list, ("id", 1234, 300)),), (), ()))
    assert portable_key(((), (("global L", list, ((int, 1), (list, ((float, 2.0),)))),), (), ()))


def test_kept_traces_are_cleared_with_the_kernels(user):
    user(["loop_rows"])
    assert len(_traces(user.cache)) == 1
    with npc.config.patch(cache_dir=str(user.cache)):
        npc.compiler.clear_cache()
    assert _traces(user.cache) == []


OUTSIDE = ["clock", "perf", "env_item", "env_get", "reads_file", "draws_python", "now", "loadtxt", "env_map"]


def test_values_from_outside_are_not_kept(user, tmp_path):
    # The clock, the environment, files and the random module: each trace is not kept, and a
    # later process computes with the values it has.
    data = tmp_path / "value.txt"
    data.write_text("2.0")
    log = []
    first = user(OUTSIDE, UM_E="2.0", UM_DATA=str(data), log=log)
    assert _traces(user.cache) == []
    # (Most are seen as the code starts, reading the function from its module; the rest as
    # they are called.)
    for what in ("clock: trace not kept: clock reads time.time",
                 "env_item: trace not kept: env_item reads os.environ",
                 "env_get: trace not kept: env_get reads os.getenv", "reads_file reads builtin open",
                 "draws_python reads random.random", "now reads datetime.now",
                 "loadtxt: trace not kept: calls numpy.loadtxt", "env_map reads os.getenv"):
        assert what in log[0], what
    data.write_text("5.0")
    again = user(OUTSIDE, UM_E="3.0", UM_DATA=str(data))
    assert _traces(user.cache) == []
    for name in OUTSIDE:
        assert again[name]["loaded"] == 0 and again[name]["traces"] == 1, name
    for name, scale in (("env_item", 3.0), ("env_get", 3.0), ("env_map", 3.0), ("reads_file", 5.0),
                        ("loadtxt", 5.0)):
        x = np.asarray(first[name]["numpy"]) / 2.0
        np.testing.assert_array_equal(np.asarray(first[name]["first"]), x * 2.0)
        np.testing.assert_array_equal(np.asarray(again[name]["first"]), x * scale)
        np.testing.assert_array_equal(np.asarray(again[name]["second"]), x * scale)


def test_a_loaded_array_file_is_not_kept(user, tmp_path):
    data = tmp_path / "value.npy"
    np.save(data, np.arange(6.0))
    first = user(["loads_npy"], UM_DATA=str(data))["loads_npy"]
    assert _traces(user.cache) == []
    np.save(data, np.arange(6.0) * 10)
    again = user(["loads_npy"], UM_DATA=str(data))["loads_npy"]
    assert again["loaded"] == 0
    np.testing.assert_array_equal(np.asarray(again["first"]) - np.asarray(first["first"]), np.arange(6.0) * 9)


@pytest.mark.parametrize("name", ["argv_scale", "argv_helper"])
def test_command_line_arguments_are_compared(user, name):
    first = user([name], argv=["2.0"])[name]
    assert len(_traces(user.cache)) == 1
    same = user([name], argv=["2.0"])[name]
    assert same["loaded"] == 1 and same["traces"] == 0
    _same(first["first"], same["first"])
    other = user([name], argv=["3.0"])[name]
    assert other["loaded"] == 0 and other["traces"] == 1
    _close_to_numpy(other["first"], other["numpy"])
    np.testing.assert_array_equal(np.asarray(other["first"]), np.asarray(first["first"]) * 1.5)


def test_pure_python_around_the_arrays_is_kept(user):
    # range, len, enumerate, zip, sorted, math, functools.reduce, list.append, dict.get,
    # str.format, a helper and a class of the user's (a static method, __call__).
    first = user(["pure_python"])["pure_python"]
    assert len(_traces(user.cache)) == 1
    second = user(["pure_python"])["pure_python"]
    assert second["loaded"] == 1 and second["traces"] == 0
    _same(first["first"], second["first"])
    _close_to_numpy(second["first"], second["numpy"])



class _UserCallable:
    def __call__(self):
        return 1


def test_what_the_users_code_may_call():
    import datetime
    import functools
    import itertools
    import math
    import operator
    import random
    import time
    allowed = [range, len, print, sorted, isinstance, int, dict, math.sqrt, [].append, dict.get, "{} {:.3f}".format,
               (3).bit_length, np.sum, np.sqrt, np.float64, np.errstate, npc.sum, npc.sqrt, npc.zeros(2).copy,
               functools.partial(math.sqrt), operator.add, itertools.chain, _UserCallable, _UserCallable(),
               _same, lambda: 0]
    refused = [time.time, time.perf_counter, os.getenv, os.environ.get, random.random, random.randint,
               datetime.datetime.now, open, input, hash, id, eval, getattr, np.loadtxt, np.load, np.save, np.fromfile,
               np.memmap, np.ndarray.tofile, np.seterr, np.random.rand, np.random.default_rng, npc.loadtxt,
               npc.random.rand, np.frompyfunc(time.time, 0, 1), np.vectorize(time.time), functools.partial(time.time),
               subprocess.run, pytest.fail, np.datetime_as_string, npc.get_num_threads, operator.attrgetter,
               "{0.environ}".format, "{0[k]}".format_map]
    for c in allowed:
        assert _reads._verdict(c) is None, c
    for c in refused:
        assert _reads._verdict(c) is False, c
    # Those that call their first argument: allowed with an allowed one only.
    for c in (map, filter, functools.reduce, np.vectorize, iter):
        assert _reads._verdict(c) == "fn", c
    assert _reads._argument_ok("fn", math.sqrt) and not _reads._argument_ok("fn", time.time)
    assert _reads._verdict(hasattr) == "obj" and not _reads._argument_ok("obj", os)
    # Format strings that read attributes or items by name; the clock through datetime64.
    assert _reads._verdict(str.format) == "format" and _reads._argument_ok("format", "{0:.2f} {x}")
    assert not _reads._argument_ok("format", "{0.real}") and not _reads._argument_ok("format", "{0:{1[k]}}")
    assert _reads._verdict(np.datetime64) == "clock" and _reads._argument_ok("clock", "2020-01-01")
    assert not _reads._argument_ok("clock", "now") and not _reads._argument_ok("clock", "today")


def test_cache_entries_read_whole_and_checked(tmp_path):
    # Note [entries read in place] (src/fusion/jit.cpp): an entry is read into the bytes object
    # returned, its trailer cut off; an entry that is not whole or not sealed reads as None.
    name = "0123456789abcdef" * 2 + ".trace"
    payload = bytes(range(256)) * 4099 + b"end"
    with npc.config.patch(cache_dir=str(tmp_path)):
        assert npc._core._cache_entry_read(name) is None
        assert npc._core._cache_entry_write(name, payload)
        got = npc._core._cache_entry_read(name)
        assert type(got) is bytes and got == payload
        assert npc._core._cache_entry_write(name, b"")
        assert npc._core._cache_entry_read(name) == b""
        assert npc._core._cache_entry_write(name, payload)
        path = tmp_path / name
        if not path.exists():  # entries may live in a subdirectory of the configured one
            path = next(tmp_path.rglob(name))
        whole = path.read_bytes()
        for damaged in (whole[:-1], whole[:len(whole) // 2], whole[:10],
                        whole[:100] + bytes([whole[100] ^ 1]) + whole[101:]):
            path.write_bytes(damaged)
            assert npc._core._cache_entry_read(name) is None
        path.write_bytes(whole)
        assert npc._core._cache_entry_read(name) == payload
