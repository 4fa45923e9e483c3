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
    with npc.config.patch(cache_dir=str(tmp_path_factory.getbasetemp() / "npc-cache-compile-globals")):
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
