"""Kernels are generic over the integers of their index arithmetic (Note [generic kernels]
in src/fusion/kernel_params.cpp): a loop traced at two trip counts compiles the same number
of kernels, and element updates of a row loop write in place (Note [writes in place])."""
import pathlib
import sys

import numpy as np
import pytest

import npc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import bench.programs as bp  # noqa: E402
from bench.programs import harness as h  # noqa: E402

PROGRAMS = bp.load()
LOOPS = ["cholesky", "lu", "trisolv", "gramschmidt", "seidel_2d", "floyd_warshall"]


def _kernels(prog, size):
    npc.compiler.reset()
    args = prog.init(size, np.random.default_rng(0))
    ref = prog.fn(*h.copy_args(args))
    got = npc.compile(prog.fn)(*h.copy_args(args))
    assert h.mismatch(ref, got) is None, h.mismatch(ref, got)
    return npc.compiler.stats()["kernels_compiled"]


@pytest.mark.parametrize("name", LOOPS)
def test_kernel_count_does_not_grow_with_trip_count(name):
    prog = PROGRAMS[name]
    small = prog.sizes["tiny"] + 4
    assert _kernels(prog, small) == _kernels(prog, 2 * small)


def test_loop_of_offsets_compiles_a_fixed_number_of_kernels():
    def f(a):
        a = a.copy()
        for i in range(1, a.shape[0]):
            a[i, :i] += a[i - 1, :i] * 0.5   # offsets and extents change every iteration
        return a
    counts = []
    for n in (20, 45):
        x = np.arange(n * n, dtype=np.float64).reshape(n, n)
        npc.compiler.reset()
        got = npc.compile(f)(x)
        np.testing.assert_array_equal(np.asarray(got), f(x))
        counts.append(npc.compiler.stats()["kernels_compiled"])
    assert counts[0] == counts[1] and counts[0] <= 8, counts


def test_in_place_write_keeps_values_read_before_it():
    def f(a):
        b = a * 1.0
        y = b[2, 3] + 0.0       # read before the write, used after it
        b[2, 3] = -1.0
        b[0, :] = b[1, ::-1]    # value reads the base elsewhere: not in place
        return b, y + b[2, 3]
    x = np.arange(20.0).reshape(4, 5)
    for backend in ("fused", "eager"):
        got = npc.compile(f, backend=backend)(x)
        want = f(x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
