"""The float32/float64 loops of the transcendental ufuncs that run on glibc's vector math
library (src/ops/math_simd.cpp, Note [vector math]) against NumPy: long arrays whose lengths
are not multiples of the vector width or of the tile, strided, reversed and out= views,
special values placed at every lane position, and NumPy's RuntimeWarnings. ULP bounds come
from ulp_tolerances.csv."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npc

from _ufunc_helpers import TABLE, assert_same, run_both, ulp_bound

# The ufuncs with vector-math loops: the vmath column of ops.def (float32 and float64 loops;
# those marked '*' run on them with NPC_VECTOR_MATH=all, test_every_function_vectorized).
OPS = [r.name for r in TABLE if r.kind == 0 and r.vmath]
DTYPES = [np.float32, np.float64]
# Lengths around the vector widths (4, 8, 16 lanes) and the 1024-element tile.
LENGTHS = [1, 3, 5, 9, 15, 17, 31, 33, 1023, 1025, 2049 + 13]

# Where each function of OPS has ordinary inputs and results, keyed by the rows of the vmath
# column (test_every_vmath_row_has_a_range): the form of the domain and log10 of the range
# of magnitudes (float64, float32). "signed": a magnitude with either sign; "positive": a
# magnitude; "above 1": 1 + a magnitude; "above -1": a magnitude or a value in (-1, 0).
_ORDINARY = {
    "exp": ("signed", (-300, 2.85), (-30, 1.93)), "exp2": ("signed", (-300, 3.0), (-30, 2.1)),
    "expm1": ("signed", (-300, 2.85), (-30, 1.93)), "sinh": ("signed", (-300, 2.85), (-30, 1.93)),
    "cosh": ("signed", (-300, 2.85), (-30, 1.93)), "tanh": ("signed", (-300, 1.5), (-30, 1.2)),
    "sin": ("signed", (-300, 6), (-30, 4)), "cos": ("signed", (-300, 6), (-30, 4)),
    "tan": ("signed", (-300, 6), (-30, 4)), "arctan": ("signed", (-300, 300), (-30, 30)),
    "arcsinh": ("signed", (-300, 300), (-30, 30)), "cbrt": ("signed", (-300, 300), (-30, 30)),
    "arcsin": ("signed", (-300, 0), (-30, 0)), "arccos": ("signed", (-300, 0), (-30, 0)),
    "arctanh": ("signed", (-300, -0.0001), (-30, -0.0001)),
    "log": ("positive", (-300, 300), (-30, 30)), "log2": ("positive", (-300, 300), (-30, 30)),
    "log10": ("positive", (-300, 300), (-30, 30)), "arccosh": ("above 1", (0, 300), (0, 30)),
    "log1p": ("above -1", (-300, 300), (-30, 30)),
}


def ordinary(op, dtype, n, seed=0):
    """n in-domain values spread over the magnitudes where `op` has ordinary results."""
    rng = np.random.default_rng(seed)
    form, *ranges = _ORDINARY[op]
    lo, hi = ranges[0 if dtype == np.float64 else 1]
    if form == "above -1":
        x = np.where(rng.random(n) < 0.5, -rng.random(n) * 0.999, 10.0 ** rng.uniform(lo, hi, n))
        return x.astype(dtype)
    if form in ("positive", "above 1"):
        return (10.0 ** rng.uniform(lo, hi, n)).astype(dtype) + dtype(form == "above 1")
    x = 10.0 ** rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)
    # Half the values on a human scale, where most inputs of a real program lie.
    near = rng.uniform(-3, 3, n) if hi > 0.5 else rng.uniform(-1, 1, n) * 0.999
    return np.where(rng.random(n) < 0.5, x, near).astype(dtype)


def test_every_vmath_row_has_a_range():
    """Every row of the vmath column has its inputs here, and nothing else does."""
    assert OPS and set(_ORDINARY) == set(OPS)


def specials(dtype):
    f = np.finfo(dtype)
    tiny_sub = np.nextafter(dtype(0), dtype(1))
    return [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, f.max, -f.max, f.tiny, -f.tiny, tiny_sub,
            -tiny_sub, f.tiny * 64, 1.0, -1.0, 2.0, -2.0, 0.5, 89.0, -104.0, 710.0, -746.0, 1e5, -1e5,
            1e30, 1.5707963267948966, float(f.eps), 1e-30, 2.0 ** -70]


def check(op, x_np, x_npc, what, out=None):
    f_np, f_npc = getattr(np, op), getattr(npc, op)
    if out is None:
        e, g, we, wg = run_both(f_np, f_npc, (x_np,), (x_npc,))
    else:
        o_np, o_npc = out
        e, g, we, wg = run_both(lambda a: f_np(a, out=o_np), lambda a: f_npc(a, out=o_npc), (x_np,), (x_npc,))
        e, g = o_np, o_npc
    assert_same(g, e, op, ulp_bound(op, np.dtype(x_np.dtype)), what)
    assert wg == we, f"{what}: warnings {wg} != NumPy's {we}"


@pytest.mark.parametrize("dtype", DTYPES, ids=["f4", "f8"])
@pytest.mark.parametrize("op", OPS)
def test_long_arrays_every_length(op, dtype):
    for n in LENGTHS:
        a = ordinary(op, dtype, n, seed=n)
        check(op, a, npc.asarray(a.copy()), f"{op} {np.dtype(dtype)} n={n}")


@pytest.mark.parametrize("dtype", DTYPES, ids=["f4", "f8"])
@pytest.mark.parametrize("op", OPS)
def test_views_and_out(op, dtype):
    n = 3003
    a = ordinary(op, dtype, n, seed=1)
    p = npc.asarray(a.copy())
    check(op, a[::3], p[::3], f"{op} strided")
    check(op, a[::-1], p[::-1], f"{op} reversed")
    check(op, a.reshape(3, -1)[:, 1:-2].T, p.reshape(3, -1)[:, 1:-2].T, f"{op} transposed 2-d")
    check(op, a, p, f"{op} out= strided", out=(np.zeros(2 * n, dtype)[::2], npc.zeros(2 * n, dtype)[::2]))
    b, q = a.copy(), npc.asarray(a.copy())  # in place
    check(op, b, q, f"{op} out= in place", out=(b, q))


@pytest.mark.parametrize("dtype", DTYPES, ids=["f4", "f8"])
@pytest.mark.parametrize("op", OPS)
def test_special_values_at_every_lane(op, dtype):
    """Each special value on every lane 0..15 of a vector, among ordinary values: at (p, p) of
    a (32, 37) array (flat index 38 p: every even residue mod 16) and at (p, p + 1) of a
    (32, 33) one (34 p + 1: every odd residue); also at a tile's last element and in the
    tail. Values and warnings equal NumPy's."""
    base = ordinary(op, dtype, 4096, seed=7)
    for s in specials(dtype):
        with np.errstate(over="ignore"):
            v = dtype(s)
        for cols, shift in ((37, 0), (33, 1)):
            a = base[: 32 * cols].reshape(32, cols).copy()
            for p in range(32):
                a[p, (p + shift) % cols] = v
            check(op, a, npc.asarray(a.copy()), f"{op}({v!r}) lanes, {cols} columns")
        a = base[:1029].copy()
        a[[1023, 1024, 1027, 1028]] = v
        check(op, a, npc.asarray(a.copy()), f"{op}({v!r}) at the tile end and in the tail")
        check(op, a[::-2], npc.asarray(a.copy())[::-2], f"{op}({v!r}) reversed strided")


_SCALAR_SCRIPT = r"""
import json, sys, warnings
import numpy as np
import npc
ops, cases = json.loads(sys.stdin.read())
res = []
for op in ops:
    for dt, bits in cases:
        a = npc.asarray(np.array(bits, dtype=np.uint64 if dt == "float64" else np.uint32).view(dt))
        with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
            warnings.simplefilter("always")
            r = np.asarray(getattr(npc, op)(a))
        res.append([r.view(np.uint64 if dt == "float64" else np.uint32).tolist(),
                    sorted({str(x.message) for x in w})])
print(json.dumps(res))
"""


def test_special_values_bit_identical_to_the_scalar_loop():
    """Special values (one per call, 37 ordinary values around it) give the scalar loop's
    bits and, under errstate(all='warn'), its warnings, underflow included (the vector
    routine's own flags are discarded, Note [vector math]). The scalar loop runs in a child
    process with NPC_VECTOR_MATH=0."""
    cases = []
    for dt in DTYPES:
        base = ordinary("tanh", dt, 37, seed=3)
        for s in specials(dt):
            with np.errstate(over="ignore"):
                a = base.copy()
                a[18] = dt(s)
            # Bit patterns: JSON would drop the sign of a NaN.
            cases.append((np.dtype(dt).name, a.view(np.uint64 if dt == np.float64 else np.uint32).tolist()))
    env = dict(os.environ, NPC_VECTOR_MATH="0")
    proc = subprocess.run([sys.executable, "-c", _SCALAR_SCRIPT], input=json.dumps([OPS, cases]),
                          capture_output=True, text=True, env=env, check=True)
    expected = json.loads(proc.stdout)
    k = 0
    for op in OPS:
        for dt, in_bits in cases:
            vals = np.array(in_bits, dtype=np.uint64 if dt == "float64" else np.uint32).view(dt)
            a = npc.asarray(vals.copy())
            with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
                warnings.simplefilter("always")
                r = np.asarray(getattr(npc, op)(a))
            bits = r.view(np.uint64 if dt == "float64" else np.uint32).tolist()
            exp_bits, exp_warn = expected[k]
            k += 1
            what = f"{op} {dt} special {vals[18]!r}"
            assert sorted({str(x.message) for x in w}) == exp_warn, what
            ref = np.array(exp_bits, dtype=np.uint64 if dt == "float64" else np.uint32).view(dt)
            scalar = _takes_scalar(vals, ref)
            assert bits[18] == exp_bits[18] or not scalar[18], what
            # Lanes the scalar function computes are its bits; the others within the bound.
            assert np.array_equal(r.view(ref.dtype.str.replace("f", "u"))[scalar],
                                  ref.view(ref.dtype.str.replace("f", "u"))[scalar]), what
            assert_same(npc.asarray(r[~scalar]), ref[~scalar], op, ulp_bound(op, np.dtype(dt)), what)


def _takes_scalar(x, y):
    """Lanes that Note [vector math] hands to the scalar function: input NaN, infinite, zero
    or below 2^-500 (2^-60 for float32) in magnitude; result NaN, infinite, zero or subnormal."""
    f = np.finfo(x.dtype)
    lo = 2.0 ** -500 if x.dtype == np.float64 else 2.0 ** -60
    with np.errstate(invalid="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        return ~((ax >= lo) & (ax <= f.max) & (ay >= f.tiny) & (ay <= f.max))


def test_scalar_loop_is_used_when_vector_math_is_off():
    """NPC_VECTOR_MATH=0 keeps the scalar loops (what the comparison above relies on):
    float64 tanh (a vector loop by default) equals glibc's scalar tanh bit for bit then."""
    code = ("import numpy as np, npc, math; a = np.linspace(-5, 5, 1001); "
            "r = np.asarray(npc.tanh(npc.asarray(a))); "
            "print(all(float(v) == math.tanh(float(x)) for v, x in zip(r, a)))")
    env = dict(os.environ, NPC_VECTOR_MATH="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.skipif(os.environ.get("NPC_VECTOR_MATH") == "all", reason="already the 'all' run")
def test_every_function_vectorized():
    """This module again with NPC_VECTOR_MATH=all, where every function above (float32 and
    float64) runs on the vector loop, not only the default set (Note [vector math policy])."""
    env = dict(os.environ, NPC_VECTOR_MATH="all")
    proc = subprocess.run([sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-W", "ignore::pytest.PytestAssertRewriteWarning"],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(__file__))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_float32_arctanh_through_float64():
    """float32 arctanh runs the float64 vector routine on widened lanes (Note [float32 through
    float64] in src/ops/math_simd.cpp): within 1 ULP of the float64 result rounded to float32,
    over (-1, 1), and NumPy's values, flags and warnings at the special lanes."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1, 1, 200_000), rng.uniform(-1e-3, 1e-3, 20_000),
                        rng.uniform(0.999, 1, 20_000)]).astype(np.float32)
    got = np.asarray(npc.arctanh(npc.asarray(x)))
    ref = np.arctanh(x.astype(np.float64)).astype(np.float32)
    assert got.dtype == np.float32
    ulps = np.abs(got.view(np.int32).astype(np.int64) - ref.view(np.int32))
    assert ulps.max() <= 1
    for v in [1.0, -1.0, 2.0, np.inf, np.nan, 0.0, -0.0, 1e-40]:
        check("arctanh", np.full(37, v, np.float32), npc.full(37, v, np.float32), f"arctanh({v})")
