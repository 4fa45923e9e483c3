"""The real-programs suite (bench/programs/) run differentially at its tiny size: NumPy, npc
eager on the same source (``np`` bound to npc), and ``npc.compile`` of the NumPy function on
both backends, traced and then replayed; every result must validate against NumPy's as the
benchmark validates it (same dtype and shape, allclose 1e-5/1e-8, else relative L2 < 1e-5)."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import npc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402

PROGRAMS = bp.load()


def _args(prog):
    return prog.init(prog.sizes["tiny"], np.random.default_rng(0))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_eager_matches_numpy(name):
    prog = PROGRAMS[name]
    args = _args(prog)
    ref = prog.fn(*h.copy_args(args))
    got = h.eager_variant(prog.fn)(*h.as_npc(h.copy_args(args)))
    assert h.mismatch(ref, got) is None, h.mismatch(ref, got)


def _compiled_check(name, backend):
    prog = PROGRAMS[name]
    args = _args(prog)
    ref = prog.fn(*h.copy_args(args))
    cf = npc.compile(prog.fn, backend=backend)
    for call in ("trace", "replay"):
        passed = h.copy_args(args)
        got = cf(*passed)
        assert h.mismatch(ref, got) is None, f"{call}: {h.mismatch(ref, got)}"
        # The program copies what it mutates: the caller's arrays are unchanged.
        for a, p in zip(args, passed):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, p)


@pytest.mark.parametrize("backend", ["fused", "eager"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_matches_numpy(name, backend):
    # In this process, after whatever it ran before: kernels loaded earlier, cleared caches
    # and reused memory must not change the result (test_kernel_cache_reload.py).
    _compiled_check(name, backend)


def test_compiled_programs_read_no_unwritten_memory():
    # Every allocation made without zeroing holds the byte 0xA5 (Note [poisoned allocations]
    # in src/core/ndarray.cpp): a kernel that reads memory it never wrote gives garbage.
    code = ("import sys; sys.path.insert(0, %r); import test_real_programs as t, numpy as np, npc\n"
            "assert np.asarray(npc.empty(3, np.uint8)).tolist() == [0xA5] * 3\n"
            "for name in sorted(t.PROGRAMS):\n"
            "    for backend in ('fused', 'eager'):\n"
            "        t._compiled_check(name, backend)\n") % str(pathlib.Path(__file__).parent)
    env = dict(os.environ, NPC_POISON_EMPTY="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, f"exit status {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def test_the_suite_covers_the_issue_list():
    # Each topic of the suite has programs; the runner and this test read the same registry.
    topics = {p.topic for p in PROGRAMS.values()}
    assert topics == set(bp.MODULES)
    assert len(PROGRAMS) >= 25
