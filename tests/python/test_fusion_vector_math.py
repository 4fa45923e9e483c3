"""Transcendental ufuncs in fused kernels on the eager loops' vector routines (Note [vector
math in kernels] in src/fusion/kir_vector_math.cpp).

Where eager npc computes an op with a libmvec routine (Note [vector math policy] in
src/ops/math_simd.cpp), the fused kernel calls the same routine over lane blocks: compiled
results equal eager npc's bit for bit, are within ulp_tolerances.csv of NumPy's, give NumPy's
special values and NumPy's floating-point warnings, for float32 and float64, contiguous and
strided inputs; the kernel text shows the vector call. NPC_VECTOR_MATH=0 and =all move the
kernels with the eager loops (checked in child processes).
"""
import json
import os
import pathlib
import platform
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npc
from npc import _core

from _fused_source import compiled_source_and_result
from _ulps import assert_close

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from bench.programs.harness import mismatch  # noqa: E402 - the real-programs suite's validation

# The ufuncs with a vector routine and the loops that take it by default: ops.def's vmath
# column ("f d*": float32 by default, float64 only with NPC_VECTOR_MATH=all). The routine's C
# name is NumPy's name with "arc" spelt "a" (arcsin: asin), as libmvec names them.
VMATH = {r.name: r.vmath.split() for r in _core.op_table() if r.vmath}
OPS = list(VMATH)
C_NAME = {op: op.replace("arc", "a") for op in OPS}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


_FLAGS = _cpu_flags()
HAVE_VECTOR = platform.machine() in ("x86_64", "AMD64") and ("avx512f" in _FLAGS or {"avx2", "fma"} <= _FLAGS)
MODE = os.environ.get("NPC_VECTOR_MATH", "")


def eager_vectorised(op, dtype, mode=MODE):
    """Whether eager npc runs `op` on `dtype` with a vector routine (the policy's table)."""
    if not HAVE_VECTOR or mode in ("0", "off"):
        return False
    if mode == "all":  # every loop the column lists, starred or not
        return ("d" if dtype == np.float64 else "f") in "".join(VMATH[op])
    if op == "arctanh" and dtype == np.float32:
        return True  # through the float64 routine (Note [float32 through float64])
    return ("d" if dtype == np.float64 else "f") in VMATH[op]


def vector_call(op, dtype, mode=MODE):
    """The kernel text of the vector call of `op` ('npk::vm::atanh_via64_e(' ...)."""
    via = "_via64" if op == "arctanh" and dtype == np.float32 and mode != "all" else ""
    return f"npk::vm::{C_NAME[op]}{via}_"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-vmath")
    npc.compiler.reset()
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def specials(dtype):
    f = np.finfo(dtype)
    sub = np.nextafter(dtype(0), dtype(1))
    return np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, f.max, -f.max, f.tiny, -f.tiny, sub, -sub,
                     f.tiny * 64, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 0.999, 89.0, -104.0, 710.0, -746.0, 1e5, -1e5,
                     1e30, 1.5707963267948966, float(f.eps), 1e-30, 2.0 ** -70, 1e-300], dtype=np.float64)


def mixed_input(dtype, n=2900, seed=0):
    """Ordinary values of every op's domain (magnitudes from tiny to large, both signs, the
    unit interval) with the special values spread over lanes and block tails."""
    rng = np.random.default_rng(seed)
    big = 10.0 ** rng.uniform(-30 if dtype == np.float32 else -300, 3, n) * rng.choice([-1.0, 1.0], n)
    near = rng.uniform(-3, 3, n)
    unit = rng.uniform(-1, 1, n) * 0.999
    x = np.where(rng.random(n) < 0.4, big, np.where(rng.random(n) < 0.5, near, unit))
    s = specials(dtype)
    pos = np.concatenate([np.arange(len(s)) * 37 % n, n - 1 - np.arange(len(s))])
    x[pos] = np.concatenate([s, s])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def all_ops(a):
    return tuple(getattr(np, op)(a) for op in OPS)


def eager(op, a):
    with np.errstate(all="ignore"):
        return np.asarray(getattr(npc, op)(npc.asarray(np.ascontiguousarray(a))))


def layouts(x):
    return {"contiguous": x, "strided": x[::3], "reversed": x[::-2],
            "transposed": x[: 29 * 100].reshape(29, 100)[:, 1:-2].T}


needs_vector = pytest.mark.skipif(not HAVE_VECTOR, reason="no AVX-512F or AVX2+FMA: no vector routines")


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "transposed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_every_op_equals_eager_bits_and_numpy_ulps(dtype, layout, capfd):
    x = layouts(mixed_input(dtype))[layout]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, src = compiled_source_and_result(all_ops, (x,), capfd)
        want = all_ops(x)
        for op, g, w in zip(OPS, got, want):
            e = eager(op, x)
            if eager_vectorised(op, dtype):
                assert vector_call(op, dtype) in src, f"{op} {np.dtype(dtype)}: no vector call in the kernel"
            else:
                assert f"npk::vm::{C_NAME[op]}_" not in src, f"{op} {np.dtype(dtype)}: vector call, eager is scalar"
            assert g.tobytes() == e.tobytes(), f"{op} {np.dtype(dtype)} {layout}: fused != eager bits"
            assert_close(op, w, g)


@needs_vector
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f4", "f8"])
def test_special_values_and_warnings_as_numpy(dtype, capfd):
    """NaN, inf, zeros, subnormals, out-of-domain and overflowing inputs, op by op: NumPy's
    values (exactly for the special results) and NumPy's warnings, in NumPy's order."""
    s = np.concatenate([specials(dtype), [3.0, -3.0, 1e3, -1e3, 1e-3]])
    with np.errstate(over="ignore"):
        x = np.tile(s, 9).astype(dtype)  # every special on several lanes, a partial block
    for op in OPS:
        fn = lambda a, op=op: getattr(np, op)(a * 1)  # noqa: E731 - a body local for the op
        with np.errstate(all="warn", under="ignore"):  # NumPy's default for underflow
            with warnings.catch_warnings(record=True) as want_w:
                warnings.simplefilter("always")
                want = fn(x)
            with warnings.catch_warnings(record=True) as got_w:
                warnings.simplefilter("always")
                got, src = compiled_source_and_result(fn, (x,), capfd)
        if eager_vectorised(op, dtype):
            assert vector_call(op, dtype) in src
        assert_close(op, want, got)
        special = np.isinf(want) | (want == 0)
        assert np.array_equal(np.signbit(want[special]), np.signbit(got[special])), op
        assert [(w.category, str(w.message)) for w in got_w] == [(w.category, str(w.message)) for w in want_w], op
        assert got.tobytes() == eager(op, x * 1).tobytes(), op


def haversine(lat1, lon1, lat2, lon2, xp=np):
    dlat = lat2 - lat1
    dlon = lon2 - lon1
    a = xp.sin(dlat / 2) ** 2 + xp.cos(lat1) * xp.cos(lat2) * xp.sin(dlon / 2) ** 2
    return 2 * 6371.0 * xp.arctan2(xp.sqrt(a), xp.sqrt(1 - a))


def trig_chain(x, y, xp=np):
    return xp.sin(x) * xp.cos(y) + xp.tanh(x) * xp.log1p(xp.abs(y))


def sin_cos_exp(x, y, xp=np):
    return xp.exp(xp.sin(x) * xp.cos(y))


def eager_of(fn, *args):
    return np.asarray(fn(*(npc.asarray(a) for a in args), xp=npc))


@needs_vector
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_chains_equal_eager_bits(strided, capfd):
    rng = np.random.default_rng(3)
    n = 5003
    pick = (lambda a: a[::2]) if strided else (lambda a: a[:n])
    args64 = [pick(rng.random(2 * n) * s) for s in (3, 6, 3, 6)]
    got, src = compiled_source_and_result(haversine, args64, capfd)
    assert got.tobytes() == eager_of(haversine, *args64).tobytes()
    # Chains amplify the ops' ULPs (a short distance cancels): NumPy within the real-programs
    # suite's validation (bench/programs/harness.py); each op's ULP bound is checked above.
    assert mismatch(haversine(*args64), got) is None
    if eager_vectorised("sin", np.float64):
        assert vector_call("sin", np.float64) in src and vector_call("cos", np.float64) in src
    args32 = [pick((rng.standard_normal(2 * n) * 3).astype(np.float32)) for _ in range(2)]
    got, src = compiled_source_and_result(trig_chain, args32, capfd)
    for op in ("sin", "cos", "tanh", "log1p"):
        assert (vector_call(op, np.float32) in src) == eager_vectorised(op, np.float32), op
    assert ("npk_vb" in src) == eager_vectorised("sin", np.float32)  # the lane-block loop
    assert got.tobytes() == eager_of(trig_chain, *args32).tobytes()
    assert mismatch(trig_chain(*args32), got) is None
    got, src = compiled_source_and_result(sin_cos_exp, args32, capfd)
    assert (vector_call("sin", np.float32) in src) == eager_vectorised("sin", np.float32)
    # float32 exp is one rule in both (Note [float32 exp]); sin and cos as eager npc runs them
    assert got.tobytes() == eager_of(sin_cos_exp, *args32).tobytes()
    assert mismatch(sin_cos_exp(*args32), got) is None


def test_invariant_operand_stays_scalar_and_correct(capfd):
    # sin of a value that does not depend on the loop: no lane block is needed for it.
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    fn = lambda a, c: a * np.sin(c)  # noqa: E731
    got, _ = compiled_source_and_result(fn, (x, np.float32(0.5)), capfd)
    np.testing.assert_array_equal(got, fn(x, np.float32(0.5)))


_CHILD = r"""
import json, sys
import numpy as np
import npc
from npc import _core
x = (np.random.default_rng(0).standard_normal(3001) * 4)
out = {}
_core._fusion_set_config({"output_code": True})
for dt in ("float32", "float64"):
    a = x.astype(dt)
    f = npc.compile(lambda v: (np.sin(v), np.tanh(v), np.log1p(np.abs(v))), backend="fused")
    got = f(a)
    eager = (npc.sin(npc.asarray(a)), npc.tanh(npc.asarray(a)), npc.log1p(npc.abs(npc.asarray(a))))
    out[dt] = [np.asarray(g).tobytes() == np.asarray(e).tobytes() for g, e in zip(got, eager)]
print(json.dumps(out))
"""


@needs_vector
@pytest.mark.parametrize("mode", ["0", "all"])
def test_policy_moves_kernels_with_the_eager_loops(mode, tmp_path):
    env = dict(os.environ, NPC_VECTOR_MATH=mode, NPC_CACHE_DIR=str(tmp_path), NPC_VERIFY="1")
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res == {"float32": [True] * 3, "float64": [True] * 3}
    calls = [line for line in r.stderr.splitlines() if "npk::vm::" in line]
    if mode == "0":
        assert not any("_e(" in c or "_d(" in c for c in calls), calls
    else:
        for op in ("sin", "tanh", "log1p"):
            assert any(f"npk::vm::{op}_" in c for c in calls), (op, calls)
