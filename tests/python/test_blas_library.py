"""npc's products call the OpenBLAS NumPy loaded (Note [one BLAS per process] in src/ops/blas.cpp)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import npc


def _numpy_uses_scipy_openblas():
    if os.environ.get("NPC_BLAS") == "system":
        return False
    deps = np.__config__.CONFIG.get("Build Dependencies", {})
    return "scipy-openblas" in str(deps.get("blas", {}).get("name", ""))


@pytest.mark.skipif(not _numpy_uses_scipy_openblas(), reason="NumPy's OpenBLAS is not in use (not shipped, or NPC_BLAS=system)")
def test_products_use_numpys_openblas():
    assert "scipy_openblas" in npc._core._blas_library()
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64, np.complex64, np.complex128):
        a = (rng.standard_normal((70, 50)) + (1j if np.dtype(dt).kind == "c" else 0)).astype(dt)
        b = rng.standard_normal((50, 30)).astype(dt)
        x = rng.standard_normal(50).astype(dt)
        # The same library: the same values as NumPy's products, dtype for dtype.
        np.testing.assert_array_equal(np.asarray(npc.asarray(a) @ npc.asarray(b)), a @ b)
        np.testing.assert_array_equal(np.asarray(npc.asarray(a) @ npc.asarray(x)), a @ x)
        np.testing.assert_array_equal(np.asarray(npc.dot(npc.asarray(x), npc.asarray(x))), np.dot(x, x))


def test_system_blas_on_request():
    code = ("import npc, numpy as np; a = np.arange(12.).reshape(3, 4); "
            "print(npc._core._blas_library()); "
            "print(np.array_equal(np.asarray(npc.asarray(a) @ npc.asarray(a.T)), a @ a.T))")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NPC_BLAS="system"),
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] in ("system", "none")
    assert out[1] == "True"


@pytest.mark.skipif(not _numpy_uses_scipy_openblas(), reason="NumPy's OpenBLAS is not in use (not shipped, or NPC_BLAS=system)")
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
def test_lapack_drivers_use_numpys_openblas(dt):
    # The drivers run in NumPy's library too: solve, inv and det equal NumPy's bit for bit,
    # also on the pivots (det's sign) of the 64-bit interface, small (one thread) and large.
    rng = np.random.default_rng(1)
    for n in (7, 260):
        a = rng.standard_normal((n, n)).astype(dt)
        b = rng.standard_normal((n, 2)).astype(dt)
        an, bn = npc.asarray(a), npc.asarray(b)
        np.testing.assert_array_equal(np.asarray(npc.linalg.solve(an, bn)), np.linalg.solve(a, b))
        np.testing.assert_array_equal(np.asarray(npc.linalg.inv(an)), np.linalg.inv(a))
        if n < 10:  # a det of 260 rows overflows float32
            assert np.asarray(npc.linalg.det(an)) == np.linalg.det(a)
        assert int(npc.linalg.matrix_rank(an)) == np.linalg.matrix_rank(a)
