"""npc.compile's bookkeeping for functions with graph breaks (Note [compiles and traces] in
python/npc/compiler/_state.py): calls that re-trace with a guard key seen before are no
compiles, so they use up neither the per-function nor the process-wide recompile limit and
append no compile-time rows; memory stays bounded over many calls; limit warnings name the
real reason. Results are compared with NumPy running the same function."""
import gc
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import npc
from npc import compiler

BACKENDS = ("eager", "fused")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory):
    cache = str(tmp_path_factory.getbasetemp() / "npc-cache-compile-budget")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        compiler.reset()
        yield
        compiler.reset()


def step_with_break(x):
    s = float(x.sum())
    return x * s


@pytest.mark.parametrize("backend", BACKENDS)
def test_breaking_calls_do_not_use_up_the_accumulated_limit(backend):
    with npc.config.patch(accumulated_recompile_limit=4):
        cf = npc.compile(step_with_break, backend=backend)
        x = np.arange(4.0)
        for _ in range(20):
            np.testing.assert_array_equal(cf(x), step_with_break(x))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no limit warning
            g = npc.compile(lambda y: y + 1, backend=backend)
            traces = compiler.stats()["traces"]
            np.testing.assert_array_equal(g(x), x + 1)
            np.testing.assert_array_equal(g(x), x + 1)
        assert compiler.stats()["traces"] == traces + 1
        assert compiler.stats()["eager_runs"] == 0
        assert compiler.stats()["recompiles"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_breaking_calls_do_not_use_up_the_recompile_limit(backend):
    with npc.config.patch(recompile_limit=2):
        cf = npc.compile(step_with_break, backend=backend, dynamic=False)
        for _ in range(10):
            for n in (3, 4):
                x = np.arange(float(n))
                np.testing.assert_array_equal(cf(x), step_with_break(x))
        assert compiler.stats()["eager_runs"] == 0
        assert compiler.stats()["recompiles"] == 1
        # A third guard key is a recompile past the limit: it warns, naming the guard.
        with pytest.warns(RuntimeWarning, match=r"recompile_limit .*arg 0: expected dtype float64, shape \(4,\)"):
            x = np.arange(5.0)
            np.testing.assert_array_equal(cf(x), step_with_break(x))
        assert compiler.stats()["eager_runs"] == 1


def test_accumulated_limit_warning_names_the_real_reason():
    with npc.config.patch(accumulated_recompile_limit=1):
        f = npc.compile(lambda y: y * 2)
        f(np.ones(2))
        g = npc.compile(lambda y: y - 2)
        with pytest.warns(RuntimeWarning) as rec:
            np.testing.assert_array_equal(g(np.ones(2)), np.ones(2) - 2)
        msg = str(rec[0].message)
        assert "accumulated_recompile_limit (1 compiles of all compiled functions together)" in msg
        assert "its first call" in msg
        assert "number of arguments" not in msg


def test_compile_times_have_one_row_per_compile():
    cf = npc.compile(step_with_break, backend="eager")
    for _ in range(30):
        cf(np.ones(3))
    rows = compiler.compile_times(repr="csv").splitlines()[1:]
    assert len(rows) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_of_a_function_with_a_break_stays_bounded(backend):
    cf = npc.compile(step_with_break, backend=backend)
    x = np.ones(4)
    for _ in range(200):
        cf(x)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3000):
            cf(x)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # About 330 bytes per call (1 MB here) before compile records stopped growing per call.
    assert grown < 64 * 1024, grown


def test_reset_and_deletion_free_compiled_functions():
    cf = npc.compile(step_with_break)
    cf(np.ones(3))
    ref = weakref.ref(cf)
    compiler.reset()
    del cf
    gc.collect()
    assert ref() is None
