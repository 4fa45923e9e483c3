"""Accuracy checking of compiled graphs (NPC_REPRO=accuracy, npc.config.repro).

A matching graph reports nothing; a backend that computes one op wrongly (a test-only
Python backend that perturbs every graph containing exp) produces the warning, the
smallest failing subgraph, and a reproduction script that runs and prints the difference.
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npc
from npc.compiler import _repro


@pytest.fixture(autouse=True)
def accuracy_mode(tmp_path, monkeypatch, tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache")
    monkeypatch.setenv("NPC_COMPILE_DEBUG_DIR", str(tmp_path / "debug"))
    del _repro._reports[:]
    with npc.config.patch(repro="accuracy", codegen_errors="raise", cache_dir=cache):
        yield tmp_path / "debug"


def _perturb_exp(graph):
    """A backend that is wrong on exp: every float output that depends on an exp is off by
    one percent; everything else is the eager result."""
    table = graph.nodes()
    wrong = [any(table[n][1] == "ufunc:exp" for n in _repro._cone(table, o)) for o in graph.output_ids]

    def run(inputs, scalars):
        outs = graph(inputs, scalars)
        return [npc.multiply(o, 1.01) if w and np.asarray(o).dtype.kind == "f" else o for o, w in zip(outs, wrong)]
    return run


npc.compiler.register_backend("test_perturb_exp", _perturb_exp)


def _calls(f, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        first = f(*args)
        second = f(*args)  # a replay of the cached graph
    return first, second, [str(x.message) for x in w if "accuracy check" in str(x.message)]


def test_matching_graph_reports_nothing(accuracy_mode):
    rng = np.random.default_rng(0)
    x, y = rng.random((64, 48)), rng.random((64, 48))
    ints = rng.integers(-50, 50, (64, 48))

    @npc.compile
    def f(x, y, i):
        return np.sum(np.exp(x) * y, axis=1), x / y - 1.5, (i * 3) // 7, np.log1p(x) > 0.3

    first, second, msgs = _calls(f, x, y, ints)
    assert msgs == [] and _repro._reports == []
    assert not accuracy_mode.exists()
    assert npc.compiler.stats()["kernels_run"] > 0
    exp = (np.sum(np.exp(x) * y, axis=1), x / y - 1.5, (ints * 3) // 7, np.log1p(x) > 0.3)
    for got in (first, second):
        np.testing.assert_allclose(np.asarray(got[0]), exp[0], rtol=1e-13)
        for g, e in zip(got[1:], exp[1:]):
            np.testing.assert_array_equal(np.asarray(g), e)


def test_mismatch_warns_bisects_and_writes_a_repro(accuracy_mode):
    rng = np.random.default_rng(1)
    x, y = rng.random((30, 20)), rng.random((30, 20))

    def body(x, y):
        return x - y, np.sum(np.exp(x * 2.0) * y, axis=1)

    f = npc.compile(body, backend="test_perturb_exp")
    _first, second, msgs = _calls(f, x, y)
    # The eager result is returned, not the perturbed one.
    np.testing.assert_array_equal(np.asarray(second[0]), x - y)
    np.testing.assert_allclose(np.asarray(second[1]), np.sum(np.exp(x * 2.0) * y, axis=1), rtol=1e-13)
    assert len(msgs) == 2, msgs
    assert "body" in msgs[0] and "output 1" in msgs[0] and "differs from the eager backend" in msgs[0]
    assert len(_repro._reports) == 1
    d = _repro._reports[0][1]
    assert os.path.dirname(d) == str(accuracy_mode)
    # The smallest failing subgraph ends at exp: no multiply by y, no reduction, no x - y.
    sub = open(os.path.join(d, "subgraph.txt")).read()
    ops = [line.split(" = ")[1].split("(")[0] for line in sub.splitlines() if " = " in line]
    assert ops[-1] == "exp", sub
    assert "reduce.add" not in ops and "subtract" not in ops and "input[1]" not in sub, sub
    assert os.path.exists(os.path.join(d, "input0.npy")) and not os.path.exists(os.path.join(d, "input1.npy"))
    np.testing.assert_array_equal(np.load(os.path.join(d, "input0.npy")), x)
    # The script runs on its own and prints the comparison of npc and NumPy.
    r = subprocess.run([sys.executable, os.path.join(d, "repro.py")], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "NPC_REPRO": ""})
    assert r.returncode == 0, r.stderr
    assert "max abs difference:" in r.stdout and "numpy float64 (30, 20) npc float64 (30, 20)" in r.stdout, r.stdout
    assert float(r.stdout.split("max abs difference:")[1].split()[0]) < 1e-12


def test_mode_is_validated():
    with npc.config.patch(repro="bogus"):
        f = npc.compile(lambda a: a + 1)
        with pytest.raises(ValueError, match="repro"):
            f(np.arange(3.0))
            f(np.arange(3.0))


def test_mismatch_in_a_graph_that_writes_its_input(accuracy_mode):
    # The check runs on copies of the inputs; on a mismatch the caller's array receives the
    # eager values.
    rng = np.random.default_rng(2)
    b = rng.random(40)

    def step(a, b):
        a[1:-1] = 0.5 * (a[:-2] + a[2:]) + np.exp(b[1:-1])
        return a.sum()

    f = npc.compile(step, backend="test_perturb_exp")
    a0 = rng.random(40)
    a, ref = a0.copy(), a0.copy()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        f(a0.copy(), b)  # the first run (eager for a Python backend)
        got = f(a, b)    # a checked replay
    want = step(ref, b)
    np.testing.assert_array_equal(a, ref)
    np.testing.assert_allclose(float(got), want, rtol=1e-13)
    assert len(_repro._reports) == 1
    assert os.path.exists(os.path.join(_repro._reports[0][1], "repro.py"))
