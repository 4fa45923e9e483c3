"""Floating-point errors in compiled (fused) kernels against NumPy's: the same RuntimeWarnings
("divide by zero encountered in divide", ...) or FloatingPointErrors under numpy.errstate,
none for lanes NumPy does not compute or for quiet NaN comparisons; and compiled functions
called from several Python threads at once and in a child process after os.fork.

Every compiled call is checked to have run generated kernels (not the eager backend). A
call whose kernels raised errors names the ops that raised them as NumPy does (docs/fusion.md,
"Floating-point errors"; exact lists and order: tests/python/test_fusion_fpwarn_per_op.py).
"""
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import npc


@pytest.fixture(autouse=True)
def _raise_and_private_cache(tmp_path_factory):
    cache = os.environ.get("NPC_CACHE_DIR") or str(tmp_path_factory.getbasetemp() / "npc-cache-fperrors")
    with npc.config.patch(codegen_errors="raise", cache_dir=cache):
        yield


def compiled(fn):
    """fn compiled with the fused backend; each call asserts that generated kernels ran it."""
    f = npc.compile(fn, backend="fused")

    def call(*args):
        s0 = npc._fusion.stats()
        out = f(*args)
        s1 = npc._fusion.stats()
        assert s1["fallbacks"] == s0["fallbacks"], "the graph ran on the eager backend"
        assert s1["kernel_runs"] > s0["kernel_runs"], "no generated kernel ran"
        return out

    return call


def outcome(fn, args, **state):
    """(sorted distinct (category, message) of the warnings, exception (type, message) or None, result).

    Distinct: NumPy repeats a warning for each op that raised it (a * 1e308 * 10.0 warns
    twice), a fused kernel once per kind; Python's default filter shows it once either way.
    """
    with warnings.catch_warnings(record=True) as w, np.errstate(**state):
        warnings.simplefilter("always")
        try:
            out, exc = fn(*args), None
        except FloatingPointError as e:
            out, exc = None, (type(e).__name__, str(e))
    return sorted({(x.category.__name__, str(x.message)) for x in w}), exc, out


def check(fn, args, **state):
    """Compiled fn warns/raises as NumPy does under errstate(**state), on the tracing call and on replays."""
    want_w, want_e, want = outcome(fn, args, **state)
    f = compiled(fn)
    for _ in range(2):  # the first call traces and compiles, the second replays
        got_w, got_e, got = outcome(f, args, **state)
        assert got_w == want_w
        assert got_e == want_e
        if want_e is None:
            got, want = np.asarray(got), np.asarray(want)
            assert got.dtype == want.dtype
            # float32 functions are the C library's or libmvec's (a few ULP from NumPy's SIMD ones);
            # sums may add in another order
            np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps if want.dtype.kind == "f" else 0)
    return want_w, want_e


F64 = np.array([1.0, 0.0, -1.0, 2.0, 3.0, 4.0, 5.0])  # odd length: vector remainders
BIG = np.linspace(-3.0, 3.0, 100_003)  # parallel loops; the odd values sit near the end
BIG[-5] = 0.0
I64 = np.array([7, -7, 3, 0, 5, -9, 11], dtype=np.int64)
NAN = np.array([np.nan, 1.0, -2.0, 3.0, np.nan, 0.0, 6.0, 7.0, 8.0, 9.0, np.nan])

# (id, function, arguments): each raises at least one kind under NumPy.
RAISING = [
    ("divide-by-zero", lambda a: a / 0.0, (F64,)),
    ("divide-by-zero-parallel", lambda a, b: (a * 2.0) / b, (BIG, BIG)),
    ("overflow-multiply", lambda a: a * 1e308 * 10.0, (F64,)),
    ("overflow-multiply-f32", lambda a: a * a, (np.full(37, 1e30, dtype=np.float32),)),
    ("overflow-exp-f32", lambda a: np.exp(a) + 1, (np.array([1, 100, -3, 89, 88, 50, 1], dtype=np.float32),)),
    ("overflow-exp-f64", lambda a: np.exp(a) + 1.0, (np.linspace(0, 1000, 10001),)),
    ("invalid-sqrt", lambda a: np.sqrt(a - 2.0), (F64,)),
    ("invalid-sqrt-parallel", lambda a: np.sqrt(a) * 2.0, (BIG,)),
    ("log-zero-and-negative", lambda a: np.log(a) + 1.0, (F64,)),
    ("invalid-arcsin", lambda a: np.arcsin(a * 0.9 + 0.5), (F64,)),
    ("sum-overflow", lambda a: np.sum(a * 1e308), (np.full(10_000, 10.0),)),
    ("cast-overflow", lambda a: a.astype(np.float32) * 2, (np.full(100, 1e300),)),
    ("int-floor-divide-by-zero", lambda a, b: a // b, (I64, np.array([1, 2, 0, 3, 0, 1, 2], dtype=np.int64))),
    ("int-remainder-by-zero", lambda a, b: a % b + 1, (I64, np.array([1, 2, 0, 3, 0, 1, 2], dtype=np.int64))),
    ("int-floor-divide-overflow", lambda a: a // -1, (np.array([np.iinfo(np.int64).min, 3], dtype=np.int64),)),
    ("float-remainder-by-zero", lambda a: a % 0.0, (F64,)),
]


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in RAISING])
def test_warnings_match_numpy(fn, args):
    got, _ = check(fn, args, all="warn")
    assert got, "the case raises no warning under NumPy"


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in RAISING])
def test_raise_matches_numpy(fn, args):
    _, exc = check(fn, args, all="raise")
    assert exc is not None


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in RAISING[:6]])
def test_ignore_matches_numpy(fn, args):
    got, exc = check(fn, args, all="ignore")
    assert got == [] and exc is None


def test_mixed_modes_raise_the_first_kind_numpy_checks():
    # 0/0 is invalid and 1/0 divide-by-zero: raise for one, warn for the other.
    a = np.array([0.0, 1.0, 2.0])
    _, exc = check(lambda x: x / 0.0, (a,), divide="raise", invalid="warn")
    assert exc == ("FloatingPointError", "divide by zero encountered in divide")
    got, exc = check(lambda x: x / 0.0, (a,), divide="ignore", invalid="warn")
    assert got == [("RuntimeWarning", "invalid value encountered in divide")] and exc is None


# Lanes NumPy does not compute, and quiet operations on NaN: no flag may escape.
QUIET = [
    ("less-nan", lambda a: a < 1.0, (NAN,)),
    ("greater-equal-nan-f32", lambda a: a >= 1.0, (NAN.astype(np.float32),)),
    ("where-compare-nan", lambda a: np.where(a > 0, a, 0.0), (NAN,)),
    ("maximum-nan", lambda a, b: np.maximum(a, b) + np.minimum(a, b), (NAN, NAN[::-1].copy())),
    ("fmax-nan", lambda a, b: np.fmax(a, b) + np.fmin(a, b), (NAN, NAN[::-1].copy())),
    ("max-reduce-nan", lambda a: np.max(a), (NAN,)),
    ("min-reduce-nan-f32", lambda a: np.min(a.reshape(1, -1), axis=1), (NAN.astype(np.float32),)),
    ("max-reduce-nan-rows", lambda a: np.max(a, axis=1), (np.where(np.eye(64) > 0, np.nan, 1.0),)),
    ("sign-nan", lambda a: np.sign(a), (NAN,)),
    ("argmin-nan", lambda a: np.argmin(a, axis=1) + np.argmax(a, axis=1), (NAN[None, 1:].repeat(3, 0),)),
    ("exp-nan-f32", lambda a: np.exp(a), (NAN.astype(np.float32),)),
    ("setitem-skips-zero", lambda a: _set_tail(a), (F64[1:].copy()[::-1].copy(),)),
    ("stencil-interior-skips-border", lambda a: _interior(a), (np.pad(np.ones((6, 9)), 1),)),
]


def _set_tail(a):
    b = a.copy()
    b[:-1] = 1.0 / a[:-1]  # a[-1] == 0 is never divided by
    return b


def _interior(a):
    b = a.copy()
    b[1:-1, 1:-1] = 1.0 / a[1:-1, 1:-1]  # the zero border is never divided by
    return b


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in QUIET])
def test_no_spurious_flags(fn, args):
    for mode in ("warn", "raise"):
        got, exc = check(fn, args, all=mode)
        assert got == [] and exc is None


def test_one_kind_raised_by_two_ops():
    # Invalid in divide and in sqrt: each op that raised is named (Note [fp error attribution]).
    check(lambda a: a / 0.0 + np.sqrt(-a), (F64,), all="warn")


def test_threads_results_and_error_states():
    """Several Python threads run one compiled function at once, each under its own errstate."""
    f = compiled(lambda a, b: np.sqrt(a) / b + a * b)
    rng = np.random.default_rng(0)
    data = [(rng.random(50_000) + 0.5, rng.random(50_000) + 0.5) for _ in range(8)]
    data[3][1][777] = 0.0  # thread 3 divides by zero
    errors, results = {}, {}
    barrier = threading.Barrier(len(data))

    def work(i):
        a, b = data[i]
        try:
            barrier.wait()
            for _ in range(20):
                with np.errstate(divide="raise"):
                    results[i] = f(a, b)
        except Exception as e:  # noqa: BLE001 - compared below
            errors[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(errors) == {3}
    assert isinstance(errors[3], FloatingPointError)
    assert str(errors[3]) == "divide by zero encountered in divide"
    for i, (a, b) in enumerate(data):
        if i != 3:
            np.testing.assert_array_equal(results[i], np.sqrt(a) / b + a * b)


FORK = textwrap.dedent("""
    import os, sys, warnings
    import numpy as np
    import npc
    npc.config.codegen_errors = "raise"
    fn = lambda a, b: np.sum(np.sqrt(a) * b, axis=1) / b[:, 0]
    f = npc.compile(fn, backend="fused")
    a = np.linspace(0.0, 4.0, 400 * 300).reshape(400, 300)
    b = a[::-1].copy() + 1.0
    assert np.allclose(f(a, b), fn(a, b), rtol=1e-13)  # the parent ran the OpenMP kernels first
    pid = os.fork()
    if pid == 0:
        ok = np.allclose(f(a * 2, b), fn(a * 2, b), rtol=1e-13)
        b0 = b.copy(); b0[7, 0] = 0.0
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with np.errstate(divide="warn"):
                f(a, b0)
        ok = ok and [str(x.message) for x in w] == ["divide by zero encountered in divide"]
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert np.allclose(f(a, b), fn(a, b), rtol=1e-13)
    print("FORK OK")
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_compiled_function_in_forked_child(tmp_path):
    env = dict(os.environ, NPC_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", FORK], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "FORK OK" in r.stdout


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16])
def test_float_remainder_and_floor_divide_of_nan_raise_nothing(dt):
    # NumPy's npy_divmod compares quietly (isless/isgreater): NaN operands raise no "invalid".
    from _compile_diff import check
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5.0, -5.0, 7.5], dt)
    b = np.array([1.0, 2.0, -2.0, np.nan, np.inf, -np.inf, 0.0, -0.5], dt)
    for f in (lambda x, y: np.remainder(x, y), lambda x, y: x // y, lambda x, y: np.divmod(x, y)):
        check(f, (a, b), (b, a), backend="fused")
