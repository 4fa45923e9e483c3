"""What compiled code reads besides its arguments is guarded (Note [globals read while
tracing] in python/npc/compiler/_reach.py): globals of helpers in this module and in others,
rebound functions, attributes of functions, compiled functions, modules and classes, dict and
string globals; what the function itself changes (lists, dicts, defaults, globals it assigns)
changes on every call, as in NumPy. Every result is compared with the plain function's."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import npc
from npc import compiler

import _globals_helper as gh
from _globals_helper import Scaler, scaled

SCALE = 2.0
MODE = "double"
PARAMS = {"s": 2.0}


class Consts:
    EPS = 1.0


def _reads_scale(x):
    return x * SCALE


def _times_ten(x):
    return x * 10.0


def _plus_one(x):
    return x + 1.0


def _uses_helper(x):
    return _reads_scale(x) + 1.0


def _calls_step(x):
    return _step(x) * 2.0


_step = _plus_one


def _by_mode(x):
    return x * 2.0 if MODE == "double" else x * 3.0


def _reads_dict(x):
    return x * PARAMS["s"]


def _reads_class(x):
    return x + Consts.EPS


def _reads_function_attr(x):
    return _plus_one(x) * _plus_one.k


_plus_one.k = 2.0


def _other_module(x):
    return scaled(x) + gh.total(x)


def _method_of_arg(x, sc):
    return sc.apply(x)


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    # Replays only (no eager runs timed against them, which would hide a stale replay).
    with npc.config.patch(cache_dir=str(tmp_path_factory.getbasetemp() / "npc-cache-compile-globals"),
                          eager_if_faster=False):
        compiler.reset()
        yield
        compiler.reset()


@pytest.fixture
def x():
    return np.arange(4.0)


def _same(cf, fn, *args):
    np.testing.assert_array_equal(cf(*args), fn(*args))


def test_global_read_by_a_helper(x, monkeypatch):
    cf = npc.compile(_uses_helper)
    _same(cf, _uses_helper, x)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 5.0)
    _same(cf, _uses_helper, x)
    assert cf(x)[1] == 6.0


def test_rebound_function(x, monkeypatch):
    cf = npc.compile(_calls_step)
    _same(cf, _calls_step, x)
    monkeypatch.setattr(sys.modules[__name__], "_step", _times_ten)
    _same(cf, _calls_step, x)
    assert cf(x)[1] == 20.0


def test_string_and_dict_globals(x, monkeypatch):
    cf = npc.compile(_by_mode)
    _same(cf, _by_mode, x)
    monkeypatch.setattr(sys.modules[__name__], "MODE", "triple")
    _same(cf, _by_mode, x)
    cd = npc.compile(_reads_dict)
    _same(cd, _reads_dict, x)
    monkeypatch.setitem(PARAMS, "s", 7.0)
    _same(cd, _reads_dict, x)
    assert cd(x)[1] == 7.0


def test_class_and_function_attributes(x, monkeypatch):
    cc = npc.compile(_reads_class)
    _same(cc, _reads_class, x)
    monkeypatch.setattr(Consts, "EPS", 4.0)
    _same(cc, _reads_class, x)
    cf = npc.compile(_reads_function_attr)
    _same(cf, _reads_function_attr, x)
    monkeypatch.setattr(_plus_one, "k", 3.0, raising=False)
    _same(cf, _reads_function_attr, x)
    assert cf(x)[0] == 3.0


def test_attribute_of_a_compiled_function(x):
    double = npc.compile(lambda v: v * 2.0)
    double.gain = 3.0

    def h(v):
        return double(v) * double.gain
    ch = npc.compile(h)
    np.testing.assert_array_equal(ch(x), x * 6.0)
    double.gain = 5.0
    np.testing.assert_array_equal(ch(x), x * 10.0)


def test_globals_of_another_module(x, monkeypatch):
    cf = npc.compile(_other_module)
    _same(cf, _other_module, x)
    monkeypatch.setattr(gh, "FACTOR", 3.0)
    _same(cf, _other_module, x)
    monkeypatch.setattr(gh, "OFFSETS", [5.0])
    _same(cf, _other_module, x)
    assert cf(x)[0] == 5.0 + 6.0 * 3.0


def test_method_of_an_argument_reads_its_modules_globals(x, monkeypatch):
    cf = npc.compile(_method_of_arg)
    sc = Scaler(2.0)
    _same(cf, _method_of_arg, x, sc)
    monkeypatch.setattr(gh, "FACTOR", 10.0)
    _same(cf, _method_of_arg, x, sc)
    assert cf(x, sc)[0] == 10.0


def test_guards_are_listed():
    cf = npc.compile(_uses_helper)
    cf(np.arange(3.0))
    text = str(npc.explain(cf)(np.arange(3.0)))
    assert "global SCALE" in text and "global _reads_scale: is the same object" in text


def test_default_container_changed_by_the_function(x):
    def f(v, seen={}):
        seen[len(seen)] = 1
        return v * len(seen)
    cf = npc.compile(f)
    for i in range(3):
        np.testing.assert_array_equal(cf(x), x * (i + 1))
    assert compiler.stats()["recompiles"] == 0


COUNT = 0


def _counts(v):
    global COUNT
    COUNT = COUNT + 1
    return v * COUNT


def test_global_assigned_by_the_function(x, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "COUNT", 0)
    cf = npc.compile(_counts)
    for i in range(5):
        np.testing.assert_array_equal(cf(x), x * (i + 1))
    assert COUNT == 5
    assert compiler.stats()["recompiles"] == 0  # not a guard that fails on every call


def test_list_appended_in_a_helper(x):
    log = []

    def note(v):
        log.append(float(len(log)))
        return v + len(log)
    cf = npc.compile(lambda v: note(v) * 2.0)
    for i in range(4):
        np.testing.assert_array_equal(cf(x), (x + i + 1) * 2.0)
    assert log == [0.0, 1.0, 2.0, 3.0]


KEPT_MODULE = '''
import numpy as np
import other

def helper(x):
    return x * other.FACTOR + other.BIAS

def f(x):
    return helper(x) + 1.0
'''

OTHER_MODULE = '''
FACTOR = 2.0
BIAS = 0.5
'''

KEPT_DRIVER = '''
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import npc
import usermod, other
cf = npc.compile(usermod.f)
x = np.arange(4.0)
a = cf(x).tolist()
other.FACTOR = 3.0
b = cf(x).tolist()
print(a[1], b[1], npc.compiler.stats()["traces_loaded"])
'''


def test_kept_trace_guards_what_its_code_reached(tmp_path):
    # A process that loads the kept trace guards the helper's module globals too.
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "usermod.py").write_text(textwrap.dedent(KEPT_MODULE))
    (mod / "other.py").write_text(textwrap.dedent(OTHER_MODULE))
    (tmp_path / "driver.py").write_text(textwrap.dedent(KEPT_DRIVER))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, NPC_CACHE_DIR=str(cache), NPC_TRACE_CACHE="1")
    outs = [subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(mod)], env=env, check=True,
                           capture_output=True, text=True, timeout=300).stdout.split() for _ in range(2)]
    assert outs[0] == ["3.5", "4.5", "0"]
    assert outs[1] == ["3.5", "4.5", "1"]  # loaded, and FACTOR's change traced again


# ---------------------------------------------------------------- objects, classes, methods
class _K:
    k = 1.0

    def __init__(self):
        self.n = 0
        self.hist = []
        self.cfg = {"s": 1.0}

    def apply(self, v):
        return v + 1.0

    def fwd(self, v):
        return v * self.k


_OBJ = _K()


def _reads_class_attr_through_instance(v):
    return v * _OBJ.k


def test_class_attribute_and_method_through_an_instance(x, monkeypatch):
    cf = npc.compile(_reads_class_attr_through_instance)
    _same(cf, _reads_class_attr_through_instance, x)
    monkeypatch.setattr(_K, "k", 2.0)
    _same(cf, _reads_class_attr_through_instance, x)
    cm = npc.compile(lambda o, v: o.apply(v))
    o = _K()
    np.testing.assert_array_equal(cm(o, x), x + 1.0)
    monkeypatch.setattr(_K, "apply", lambda self, v: v - 1.0)
    np.testing.assert_array_equal(cm(o, x), x - 1.0)


def test_attributes_changed_by_the_function_change_on_every_call(x):
    def f(o, v):
        o.n = o.n + 1
        o.hist.append(1)
        return v + o.n + len(o.hist)
    cf = npc.compile(f)
    o = _K()
    for i in range(3):
        np.testing.assert_array_equal(cf(o, x), x + 2 * (i + 1))
    assert o.n == 3 and o.hist == [1, 1, 1]


def test_objects_in_container_arguments_and_dict_attributes(x):
    cf = npc.compile(lambda ps, v: v * ps[0].k * ps[0].cfg["s"])
    p = _K()
    ps = [p]
    np.testing.assert_array_equal(cf(ps, x), x)
    p.k = 5.0
    np.testing.assert_array_equal(cf(ps, x), x * 5.0)
    p.cfg["s"] = 2.0
    np.testing.assert_array_equal(cf(ps, x), x * 10.0)


def test_compiled_bound_method_and_bound_method_global(x):
    m = _K()
    cf = npc.compile(m.fwd)
    np.testing.assert_array_equal(cf(x), x)
    m.k = 2.0
    np.testing.assert_array_equal(cf(x), x * 2.0)
    h = m.fwd
    ch = npc.compile(lambda v: h(v) + 1.0)
    np.testing.assert_array_equal(ch(x), x * 2.0 + 1.0)
    m.k = 3.0
    np.testing.assert_array_equal(ch(x), x * 3.0 + 1.0)


# ---------------------------------------------------------------- helpers' own state
def test_helper_closure_and_default_changed_by_the_trace(x):
    def mk():
        n = 0

        def inc():
            nonlocal n
            n += 1
            return n
        return inc
    inc = mk()

    def memo(k, seen={}):
        seen[k] = seen.get(k, 0) + 1
        return seen[k]
    cf = npc.compile(lambda v: v + inc() + memo("a"))
    for i in range(3):
        np.testing.assert_array_equal(cf(x), x + 2 * (i + 1))
    assert memo.__defaults__[0] == {"a": 3}


def test_function_attribute_set_by_the_function(x):
    def f(v):
        f.calls = getattr(f, "calls", 0) + 1
        return v + f.calls
    cf = npc.compile(f)
    for i in range(3):
        np.testing.assert_array_equal(cf(x), x + i + 1)
    assert f.calls == 3


def test_generator_global_advanced_by_the_function(x):
    def gen():
        k = 0
        while True:
            k += 1
            yield k
    g = gen()
    cf = npc.compile(lambda v: v + next(g))
    for i in range(3):
        np.testing.assert_array_equal(cf(x), x + i + 1)


# ---------------------------------------------------------------- values compared
import enum  # noqa: E402
import functools  # noqa: E402
from typing import NamedTuple  # noqa: E402


class _Mode(enum.Enum):
    A = 1
    B = 2


class _P(NamedTuple):
    a: float
    b: float


SEL = _Mode.A
ZERO = 0.0
PT = _P(1.0, 2.0)
LD = [{"a": 1.0}]


class _S:
    @staticmethod
    def op(v):
        return v + 1.0


def _kw(v, k):
    return v * k


PART = functools.partial(_kw, k=2.0)


def _values(v):
    out = v * 2.0 if SEL is _Mode.A else v * 3.0
    return np.copysign(out + PT.a + PT.b + LD[0]["a"], ZERO) + _S.op(v) + PART(v)


def test_enum_zero_sign_namedtuple_nested_dict_staticmethod_partial(monkeypatch):
    v = np.arange(1.0, 4.0)
    cf = npc.compile(_values)
    _same(cf, _values, v)
    mod = sys.modules[__name__]
    for name, new in [("SEL", _Mode.B), ("ZERO", -0.0), ("PT", _P(1.0, 5.0))]:
        monkeypatch.setattr(mod, name, new)
        _same(cf, _values, v)
    monkeypatch.setitem(LD[0], "a", 10.0)
    _same(cf, _values, v)
    monkeypatch.setattr(_S, "op", staticmethod(lambda w: w + 10.0))
    _same(cf, _values, v)
    monkeypatch.setitem(PART.keywords, "k", 3.0)
    _same(cf, _values, v)


def test_defaults_and_builtins_shadowed_later(x, monkeypatch):
    def f(v, *, m=2.0):
        return v + m + abs(-1.0)
    cf = npc.compile(f)
    _same(cf, f, x)
    f.__kwdefaults__["m"] = 7.0
    _same(cf, f, x)
    assert not hasattr(gh, "MISSING_AT_TRACE")
    cg = npc.compile(lambda v: gh.scaled_or_plain(v))
    np.testing.assert_array_equal(cg(x), x)
    monkeypatch.setattr(gh, "MISSING_AT_TRACE", 4.0, raising=False)
    np.testing.assert_array_equal(cg(x), x * 4.0)
