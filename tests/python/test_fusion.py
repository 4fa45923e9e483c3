"""The fused backend: NumPy functions compiled by npc.compile(backend="fused") against NumPy.

Every test runs with npc.config.codegen_errors = "raise" and checks the fused backend's
counters (npc._fusion.stats()): generated kernels, not the eager backend, produced the
results (kernel_runs grew, fallbacks did not). Ops are batched into few graphs per C++
compile to keep the suite fast.
"""
import csv
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import npc
from npc import _core

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import fusion_cases as C  # noqa: E402

CODES = C.CODES
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX


@pytest.fixture(autouse=True)
def raise_on_codegen_errors(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


class Fused:
    """Compiles fn with the fused backend and checks that generated kernels ran it."""

    def __init__(self, fn):
        self.fn = npc.compile(fn, backend="fused")

    def __call__(self, *args):
        s0 = npc._fusion.stats()
        out = self.fn(*args)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"], "the graph ran on the eager backend"
        assert s1["kernel_runs"] > s0["kernel_runs"], "no generated kernel ran"
        assert not getattr(self.fn, "last_breaks", None), self.fn.last_breaks
        return out


def assert_same(got, want, ulp=0):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind in "biu" or ulp == 0:
        np.testing.assert_array_equal(got, want)
    elif want.dtype.kind == "c":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps, atol=0)
    else:
        np.testing.assert_array_max_ulp(got, want, maxulp=ulp)


def values(dtype, n=64, seed=0):
    """Test values of a dtype including its edge cases (0, -1, min, max, inf, nan)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edge = [0, 1, info.max, info.min, info.max - 1, info.min + 1] + ([-1, -2, -7] if dt.kind == "i" else [2, 7])
        v = rng.integers(info.min, info.max, n - len(edge), dtype=dt, endpoint=True)
        return np.concatenate([np.array(edge, dtype=dt), v])
    if dt.kind == "f":
        edge = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-3, 3.0]
        v = (rng.standard_normal(n - len(edge)) * 4).astype(dt)
        return np.concatenate([np.array(edge, dtype=dt), v])
    re = values(np.float32 if dt == np.complex64 else np.float64, n, seed)
    im = values(np.float32 if dt == np.complex64 else np.float64, n, seed + 1)[::-1]
    return (re + 1j * im).astype(dt)


# The ufuncs generated code renders (a pattern in the emitter table), from the op table.
_ROWS = _core.op_table()
UNARY = [r.name for r in _ROWS if r.kind == 0 and r.nin == 1 and r.nout == 1 and r.emit["cpp"][0] == "pattern"]
BINARY = [r.name for r in _ROWS if r.kind == 0 and r.nin == 2 and r.nout == 1 and r.emit["cpp"][0] == "pattern"]
# The shifts (the rows of Python's << and >>): compared with counts in [0, bits + 3) only.
SHIFTS = {r.name for r in _ROWS if r.dunders and r.dunders[0] in ("__lshift__", "__rshift__")}


def _exact_ops():
    """Ops whose real-float results NumPy rounds correctly or computes exactly (no ULP bound
    in tests/numpy_conformance/ulp_tolerances.csv): compared bit for bit."""
    path = os.path.join(ROOT, "tests", "numpy_conformance", "ulp_tolerances.csv")
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    bounded = {r["op"] for r in rows if r["kind"] == "f"}
    return {name for name in UNARY + BINARY if name not in bounded}


EXACT = _exact_ops()


def numpy_raises(name, *args):
    """Whether NumPy's `name` raises ValueError for these operands (integer power with
    negative exponents)."""
    try:
        with np.errstate(all="ignore"):
            getattr(np, name)(*args)
    except ValueError:
        return True
    return False


def loop_ops(names, dtype, nin):
    """Ops with a NumPy loop `dtype`*nin -> ... that the fused backend supports."""
    ch = np.dtype(dtype).char
    out = []
    for name in names:
        uf = getattr(np, name)
        if not any(t.split("->")[0] == ch * nin for t in uf.types):
            continue
        if _core._fusion_supports(name, CODES[np.dtype(dtype)]):
            out.append(name)
    return out


@pytest.mark.parametrize("dtype", ALL)
def test_elementwise_op_matrix(dtype):
    """Every supported unary and binary ufunc of `dtype`, in one graph per dtype."""
    a = values(dtype, seed=1)
    b = values(dtype, seed=2)[::-1].copy()
    un = loop_ops(UNARY, dtype, 1)
    bi = [o for o in loop_ops(BINARY, dtype, 2) if not numpy_raises(o, a, b)]
    shifts = [o for o in bi if o in SHIFTS]

    def f(a, b):
        return tuple(getattr(np, u)(a) for u in un) + tuple(getattr(np, o)(a, b) for o in bi)

    with np.errstate(all="ignore"):
        want = f(a, b)
        got = Fused(f)(a, b)
        if shifts:
            bshift = (np.abs(b.astype(np.int64)) % (np.dtype(dtype).itemsize * 8 + 3)).astype(dtype)
            got_shift = Fused(lambda a, b: tuple(getattr(np, o)(a, b) for o in shifts))(a, bshift)
            for o, g in zip(shifts, got_shift):
                assert_same(g, getattr(np, o)(a, bshift))
    assert len(got) == len(un) + len(bi)
    for name, g, w in zip(un + bi, got, want):
        if name in SHIFTS:
            continue
        ulp = 0 if name in EXACT else (4 if dtype != "float16" else 1)
        try:
            assert_same(g, w, ulp)
        except AssertionError as e:
            raise AssertionError(f"{name} on {dtype}: {e}") from None


def test_supported_follows_the_emitter_table():
    """_fusion_supports answers from the emitter table: a pattern row for the dtype kinds it
    lists (complex helpers aside), an Unsupported row for none (its graphs run eagerly)."""
    kind_letter = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}
    for row in _ROWS:
        if row.kind != 0:
            continue
        status, _, kinds, _ = row.emit["cpp"]
        for sig in row.loops.split():
            ins = sig.split("->")[0]
            if len(set(ins)) != 1:
                continue
            dt = np.dtype(ins[0])
            got = _core._fusion_supports(row.name, CODES[dt])
            if status == "unsupported":
                assert not got, row.name
            elif kind_letter[dt.kind] in kinds:
                assert got, (row.name, dt)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"])
def test_casts_between_all_dtypes(dtype):
    """astype to every dtype (float -> int out of range as NumPy gives it on this machine)."""
    a = values(dtype, seed=3)
    if np.dtype(dtype).kind == "f":
        a = np.concatenate([a, np.array([1e10, -1e10, 3e19, -3e19, 2.0 ** 63, 2.0 ** 64, 300.7, -129.5],
                                        dtype=np.float64).astype(dtype)])
    targets = [t for t in ALL if t != dtype]

    def f(x):
        return tuple(x.astype(t) for t in targets)

    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = f(a)
            got = Fused(f)(a)
    for t, g, w in zip(targets, got, want):
        keep = _cast_specified(a, t)  # NumPy's unspecified casts (its scalar path vs its SIMD body)
        try:
            assert_same(np.asarray(g)[keep], w[keep])
        except AssertionError as e:
            raise AssertionError(f"{dtype} -> {t}: {e}") from None


def _cast_specified(values, dst):
    sys.path.insert(0, os.path.join(ROOT, "tests", "numpy_conformance"))
    try:
        from dtypes import cast_specified
    finally:
        sys.path.pop(0)
    return cast_specified(values, dst)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "uint8", "float16", "float32", "float64", "complex128"])
def test_reductions(dtype):
    a = values(dtype, n=120, seed=4)
    if np.dtype(dtype).kind in "fc":
        a = np.where(np.isfinite(a), a, 1.5).astype(dtype)
    a = a.reshape(4, 5, 6)
    big = np.ones(100_000, dtype=np.float32) * np.float32(0.1)

    def f(x):
        r = [np.sum(x, axis=0), np.sum(x, axis=(1, 2)), np.sum(x, axis=-1, keepdims=True), np.prod(x, axis=1),
             np.any(x, axis=2), np.all(x, axis=0)]
        if x.dtype.kind != "c":
            r += [np.max(x, axis=1), np.min(x, axis=(0, 2))]
        return tuple(r)

    want = f(a)
    got = Fused(f)(a)
    exact = f(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)) if a.dtype.kind in "fc" else None
    absum = f(np.abs(a).astype(np.float64)) if a.dtype.kind in "fc" else None
    for i, (g, w) in enumerate(zip(got, want)):
        if np.asarray(w).dtype.kind in "fc":
            assert np.asarray(g).dtype == np.asarray(w).dtype
            # Summation order differs from NumPy's: both must be within the rounding bound
            # n * eps * sum(|x|) of the exact result (tolerance from the dtype, not guessed).
            eps = np.finfo(np.asarray(w).dtype).eps
            n = a.size // max(1, np.asarray(w).size)
            bound = n * eps * np.abs(absum[i]) + eps * np.abs(exact[i])
            assert np.all(np.abs(np.asarray(g).astype(exact[i].dtype) - exact[i]) <= bound + 1e-300), (i, g, exact[i])
        else:
            assert_same(g, w)
    # A long float32 sum is as accurate as NumPy's pairwise sum (blocked, not a running sum).
    s = Fused(lambda x: np.sum(x))(big)
    exact = big.astype(np.float64).sum()
    assert abs(float(s) - exact) <= max(abs(float(np.sum(big)) - exact), 2e-3)


def test_nan_handling_in_reductions():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf], [np.nan, np.nan, 0.0], [2.0, 2.0, 1.0]])
    f = Fused(lambda x: (np.max(x, axis=1), np.min(x, axis=1), np.max(x, axis=0)))
    for g, w in zip(f(a), (np.max(a, axis=1), np.min(a, axis=1), np.max(a, axis=0))):
        assert_same(g, w)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8", "bool"])
def test_argmin_argmax_graphs(dtype):
    """argmin/argmax primitives (first occurrence, NaN wins) on graphs built directly
    (npc.compile records the same nodes: tests/python/test_compile_fused.py)."""
    from npc._array import _from_numpy, _numpy_view
    a = values(dtype, n=60, seed=9).reshape(3, 4, 5)
    if np.dtype(dtype).kind == "f":
        a[1, 2, 3] = np.nan
    for op in ("argmin", "argmax"):
        for axis in range(3):
            g = _core._FusionGraph()
            x = g.input(0, CODES[a.dtype], list(a.shape))
            shape = [d for i, d in enumerate(a.shape) if i != axis]
            g.output(g.prim(op, [x], CODES[np.dtype("int64")], shape, [axis, 0]))
            out = g.compile()([_from_numpy(a)], [])[0]
            assert_same(np.asarray(_numpy_view(out)), getattr(np, op)(a, axis=axis))


def test_views_and_non_contiguous_inputs():
    x = np.arange(60.0).reshape(6, 10)

    def f(a):
        return (a[::2, 1:-1] * 2, a.T + 1, a[::-1, ::-3] - a[0, ::-3], a[:, None, :3] * a[:3, :, None].sum(),
                a.reshape(10, 6) + 1)

    want = f(x)
    for inp in (x, x[:, ::-1], np.asfortranarray(x)):
        got = Fused(f)(inp)
        for g, w in zip(got, f(inp)):
            assert_same(g, w)
    assert_same(Fused(f)(x)[0], want[0])


def test_setitem_and_out():
    a = np.arange(20.0)

    def f(x):
        w = x * 1.0
        w[2:8:2] = -x[:3]
        w[0] = 100.0
        w[-3:] += 0.5
        return w

    assert_same(Fused(f)(a), f(a))


def test_out_into_view():
    a = np.arange(20.0)

    def f(x):
        w = x * 1.0
        np.add(x[:5], 1.0, out=w[10:15])
        return w

    assert_same(Fused(f)(a), f(a))


def test_gather_graphs():
    """take / integer-array indexing as loads (graphs built directly; npc.compile records
    the same Gather nodes: tests/python/test_compile_fused.py)."""
    from npc._array import _from_numpy, _numpy_view
    a = np.arange(24.0).reshape(4, 6)
    idx = np.array([[3, -1], [0, 5]], dtype=np.int64)
    for axis in (0, 1):
        g = _core._FusionGraph()
        x = g.input(0, CODES[a.dtype], [4, 6])
        i = g.input(1, CODES[idx.dtype], [2, 2])
        y = g.ufunc("multiply", [x, x], CODES[a.dtype])
        g.output(g.gather(y, i, axis))
        ind = idx if axis == 1 else np.where(idx >= 4, idx - 4, idx)
        out = g.compile()([_from_numpy(a), _from_numpy(ind)], [])[0]
        assert_same(np.asarray(_numpy_view(out)), np.take(a * a, ind, axis=axis))


def test_mixed_dtypes_nep50():
    a = np.arange(10, dtype=np.int8)
    b = np.linspace(0, 1, 10, dtype=np.float32)

    def f(x, y):
        return x + y, x * 3, x + 300.5, y * 2.5, (x > 4) & (y < 0.7), np.maximum(x, y), x.astype(np.uint16) - 3

    for g, w in zip(Fused(f)(a, b), f(a, b)):
        assert_same(g, w)


@pytest.mark.parametrize("case", [1, 2, 3, 4, 5])
def test_demo_case(case):
    """Each `make demo` case compiled by npc.compile (small sizes), one fused kernel."""
    args, _ = C.inputs(case, small=True)
    s0 = npc._fusion.stats()
    got = Fused(C.NUMPY[case])(*args)
    s1 = npc._fusion.stats()
    want = C.NUMPY[case](*args)
    assert (s1["kernels"] - s0["kernels"]) // max(1, s1["graphs"] - s0["graphs"]) == 1
    assert_same(got, want, ulp=0 if case != 1 and case != 4 else 8)


def test_demo_graphs_one_kernel_each():
    """The demo's programs built directly on the graph IR: one loop nest each, right values."""
    from npc._array import _from_numpy, _numpy_view
    for case in range(1, 6):
        args, _ = C.inputs(case, small=True)
        g, scalars = C.graph(case, args)
        s0 = npc._fusion.stats()
        exe = g.compile()
        out = np.asarray(_numpy_view(exe([_from_numpy(a) for a in args], scalars)[0]))
        assert npc._fusion.stats()["kernels"] - s0["kernels"] == 1
        want = C.NUMPY[case](*args)
        assert out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_no_intermediates_in_memory():
    """Case 1 never builds the (n, m, m) product: peak npc memory stays at the output."""
    X, Y = np.random.rand(256, 64), np.random.rand(256, 64)
    f = Fused(C.outer_sum)
    f(X, Y)
    npc.reset_peak_memory_stats()
    base = npc.memory_stats()["current_bytes"]
    r = f(X, Y)
    peak = npc.memory_stats()["peak_bytes"] - base
    assert peak <= r.nbytes + 64 * 1024, peak
    np.testing.assert_allclose(r, C.outer_sum(X, Y), rtol=1e-12)


def test_stencil_kernel_compiled_once():
    u = C.inputs(5, small=True)[0][0]
    s0 = npc._fusion.stats()
    r = Fused(C.jacobi)(u)
    s1 = npc._fusion.stats()
    assert s1["kernel_runs"] - s0["kernel_runs"] == 50  # one launch per step
    assert (s1["kernels"] - s0["kernels"]) // max(1, s1["graphs"] - s0["graphs"]) == 1
    assert_same(r, C.jacobi(u))


# ---------------------------------------------------------------- JIT cache and compiler
RUN = textwrap.dedent("""
    import json, sys, numpy as np, npc
    npc.config.codegen_errors = "raise"
    f = npc.compile(lambda a, b: np.sqrt(a * a + b * b) - 1.25 * a, backend="fused")
    a = np.linspace(0, 1, 1001); b = np.linspace(1, 2, 1001)
    r = f(a, b)
    ok = bool(np.array_equal(r, np.sqrt(a * a + b * b) - 1.25 * a))
    print(json.dumps({"ok": ok, **npc._fusion.stats()}))
""")


def run_child(cache, extra_env=None):
    env = dict(os.environ, NPC_CACHE_DIR=str(cache), **(extra_env or {}))
    r = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=240)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_disk_cache_hit_and_corrupt_entry(tmp_path):
    first = run_child(tmp_path)
    assert first["ok"] and first["compiles"] == 1
    second = run_child(tmp_path)
    assert second["ok"] and second["compiles"] == 0 and second["disk_hits"] >= 1
    entries = [p for p in tmp_path.iterdir() if p.suffix == ".so"]
    assert entries
    for p in entries:
        data = p.read_bytes()
        p.write_bytes(data[: len(data) // 2])  # truncated entry
    third = run_child(tmp_path)
    assert third["ok"] and third["corrupt_entries"] >= 1 and third["compiles"] == 1


def test_two_processes_writing_the_cache_at_once(tmp_path):
    env = dict(os.environ, NPC_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (o, e) in zip(procs, outs):
        assert p.returncode == 0, e
        assert json.loads(o.strip().splitlines()[-1])["ok"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("tmp-")]
    again = run_child(tmp_path)
    assert again["ok"] and again["compiles"] == 0


def test_missing_compiler_falls_back_or_raises(tmp_path):
    a = np.arange(5.0)
    with npc.config.patch(cxx="/nonexistent/c++", codegen_errors="warn", cache_dir=str(tmp_path)):
        s0 = npc._fusion.stats()
        r = npc.compile(lambda x: x * 3 + 1, backend="fused")(a)
        assert_same(r, a * 3 + 1)
        assert npc._fusion.stats()["fallbacks"] > s0["fallbacks"]
    with npc.config.patch(cxx="/nonexistent/c++", cache_dir=str(tmp_path)):
        with pytest.raises(npc.CodegenError, match="no C\\+\\+ compiler"):
            _core._fusion_jit('extern "C" int f() { return 1; }')
    with pytest.raises(npc.CodegenError, match="compilation failed"):
        _core._fusion_jit("this is not C++")


UBSAN = textwrap.dedent("""
    import sys, numpy as np, npc
    npc.config.codegen_errors = "raise"
    npc.config.cxxflags = "-O1 -fopenmp -ffp-contract=off -fsanitize=undefined -fno-sanitize-recover=all"
    bad = []
    for dt in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
        info = np.iinfo(dt)
        v = np.array([0, 1, -1 if info.min < 0 else 2, info.min, info.max, info.max - 1, 7, 3], dtype=dt)
        a = np.repeat(v, len(v)); b = np.tile(v, len(v))
        sh = (np.arange(len(a)) % (8 * a.itemsize + 4)).astype(dt)
        def f(a, b, sh):
            return (a + b, a - b, a * b, a // b, a % b, np.fmod(a, b), -a, np.abs(a), np.square(a),
                    np.left_shift(a, sh), np.right_shift(a, sh), a.astype(np.float64).astype(dt),
                    (a.astype(np.float64) * 1e20).astype(dt), np.sign(a), ~a)
        with np.errstate(all="ignore"):
            want = f(a, b, sh)
            got = npc.compile(f, backend="fused")(a, b, sh)
        for i, (g, w) in enumerate(zip(got, want)):
            if not np.array_equal(g, w):
                bad.append((dt, i))
    print("BAD", bad)
""")


def test_generated_integer_code_is_free_of_undefined_behaviour(tmp_path):
    """Integer edge cases through generated code built with -fsanitize=undefined."""
    env = dict(os.environ, NPC_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", UBSAN], capture_output=True, text=True, env=env, timeout=300)
    assert "runtime error" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-3000:]
    assert "BAD []" in r.stdout, r.stdout
