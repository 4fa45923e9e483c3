"""The real-style NumPy programs of tests/python/programs, run once with NumPy and once with
npc bound to ``np``: printed output, warnings and final values must be identical."""
import pathlib
import sys

import pytest


sys.path.insert(0, str(pathlib.Path(__file__).parent / "programs"))
import runner  # noqa: E402


def test_there_are_at_least_20_programs():
    assert len(runner.PROGRAMS) >= 20


# Programs whose products and factorizations come from a BLAS/LAPACK build: npc's loads
# Debian's OpenBLAS/LAPACK where NumPy's bundled one is not used (Note [one BLAS per process] in
# src/ops/blas.cpp), and einsum contracts pairwise; whether their last bits agree with NumPy's
# depends on the CPU's BLAS kernels. Their float values are compared within BLAS_RTOL (the
# printed output, warnings, dtypes, shapes and every other value exactly); the others bit for bit.
BLAS_RTOL = 1e-12
BLAS_PROGRAMS = {"p09_einsum_paths", "p12_linear_regression", "p19_financial_timeseries", "p20_markov_chain"}


@pytest.mark.parametrize("path", runner.PROGRAMS, ids=[p.stem for p in runner.PROGRAMS])
def test_program_matches_numpy(path):
    diffs = runner.check(path, rtol=BLAS_RTOL if path.stem in BLAS_PROGRAMS else None)
    assert not diffs, "\n".join(diffs)


def test_import_rewrite():
    src = "import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\nfrom numpy import pi\n"
    assert runner.npc_source(src) == ("import npc as np\nfrom npc.lib.stride_tricks import as_strided\n"
                                      "from npc import pi\n")


def test_compare_detects_differences():
    import numpy
    import npc
    assert runner.compare({"a": numpy.arange(3.0)}, {"a": npc.arange(3.0)}) == []
    assert runner.compare({"a": numpy.arange(3.0)}, {"a": npc.arange(3)})  # dtype differs
    assert runner.compare({"a": numpy.array([0.0])}, {"a": npc.array([-0.0])})  # bits differ
    assert runner.compare(numpy.float64(1), 1.0)  # scalar type differs


def test_compare_with_a_tolerance_still_compares():
    import numpy
    assert runner.compare(numpy.array([1.0]), numpy.array([1.0 + 1e-15]), rtol=1e-12) == []
    assert runner.compare(numpy.array([1.0]), numpy.array([1.0 + 1e-9]), rtol=1e-12)
    assert runner.compare(numpy.array([1.0]), numpy.array([1.0], numpy.float32), rtol=1e-12)  # dtype
    assert runner.compare(numpy.array([1, 2]), numpy.array([1, 3]), rtol=1e-12)  # integers exactly
