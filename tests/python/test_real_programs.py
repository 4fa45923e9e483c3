"""The real-programs suite (bench/programs/) run differentially at its tiny size: NumPy, npc
eager on the same source (``np`` bound to npc), and ``npc.compile`` of the NumPy function on
both backends, traced and then replayed; every result must validate against NumPy's as the
benchmark validates it (same dtype and shape, allclose 1e-5/1e-8, else relative L2 < 1e-5)."""
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
    # Each program is compiled in a process of its own, as the fuzzer runs its programs: a
    # crash is reported as this program's failure (exit status), never as a lost worker.
    code = (f"import sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); "
            f"import test_real_programs as t; t._compiled_check({name!r}, {backend!r})")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"exit status {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def test_the_suite_covers_the_issue_list():
    # Each topic of the suite has programs; the runner and this test read the same registry.
    topics = {p.topic for p in PROGRAMS.values()}
    assert topics == set(bp.MODULES)
    assert len(PROGRAMS) >= 25
