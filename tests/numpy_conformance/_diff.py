"""Helpers of the indexing/shape/sort conformance tests: run one lambda with NumPy and with
npc on arrays holding the same values in the same memory layout, compare the results."""
import numpy as np
import pytest

import npc

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]
LAYOUTS = ["c", "f", "strided", "reversed"]



def same_error(fn, message=True):
    """fn(numpy) raises; fn(npc) raises the same exception type (and, with `message`, the
    same message)."""
    with pytest.raises(Exception) as ne:
        fn(np)
    with pytest.raises(type(ne.value)) as pe:
        fn(npc)
    if message:
        assert str(pe.value) == str(ne.value)


def _first_difference(got, exp):
    """Index path to the first item where two nested tuples/lists/bytes differ."""
    if isinstance(got, (tuple, list, bytes, str)) and type(got) is type(exp) and not (isinstance(got, str) and
                                                                                  len(got) <= 1):
        for i, (a, b) in enumerate(zip(got, exp)):
            if a != b:
                inner = _first_difference(a, b)
                return f"[{i}]{inner}" if inner else f"[{i}]: {a!r:.300} != {b!r:.300}"
        if len(got) != len(exp):
            return f": length {len(got)} != {len(exp)}"
    return None


def assert_same_outcome(got, exp):
    """got == exp for outcome tuples (results as bytes, exceptions, warnings), failing with
    the first difference. pytest's own message for `assert got == exp` diffs the operands'
    reprs with difflib, quadratic in their length and not truncated when the CI variable is
    set: tens of minutes for one (expected) failure on an 80 kB result."""
    if got != exp:
        raise AssertionError(f"npc != NumPy at {_first_difference(got, exp) or f': {got!r:.300} != {exp!r:.300}'}")


def values(shape, dtype, seed=0, distinct=False, nan=False):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if distinct:
        x = rng.permutation(n) - (0 if np.dtype(dtype).kind == "u" else n // 3)
    else:
        x = rng.integers(-9, 10, size=n)
    if np.dtype(dtype).kind == "u":
        x = np.abs(x)
    x = x.reshape(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "b":
        x = x > 0
    x = np.asarray(x).astype(dtype)
    if nan and x.dtype.kind in "fc" and x.size:
        x.flat[rng.integers(0, x.size, size=max(1, x.size // 5))] = np.nan
    return x


def pair(x, layout="c"):
    """(numpy array, npc array): equal values, the requested memory layout in both."""
    if layout == "f":
        n = np.asfortranarray(x)
        return n, npc.asarray(n.copy(order="F"))
    if layout == "strided" and x.ndim:
        big = np.repeat(x, 2, axis=-1)
        p = npc.asarray(big.copy())
        return big[..., ::2], p[..., ::2]
    if layout == "reversed" and x.ndim:
        r = x[::-1].copy()
        return r[::-1], npc.asarray(r.copy())[::-1]
    return x.copy(), npc.asarray(x.copy())


def to_np(x):
    return np.asarray(x) if isinstance(x, npc.ndarray) else x


def assert_same(got, exp, path="result"):
    if isinstance(exp, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: expected a sequence, got {type(got)}"
        assert len(got) == len(exp), f"{path}: length {len(got)} != {len(exp)}"
        for i, (g, e) in enumerate(zip(got, exp)):
            assert_same(g, e, f"{path}[{i}]")
        return
    if isinstance(exp, np.ndarray):
        assert isinstance(got, npc.ndarray), f"{path}: expected an npc array, got {type(got)}"
        assert got.dtype == exp.dtype, f"{path}: dtype {got.dtype} != {exp.dtype}"
        assert got.shape == exp.shape, f"{path}: shape {got.shape} != {exp.shape}"
        np.testing.assert_array_equal(np.asarray(got), exp, err_msg=path)
        return
    assert type(got) is type(exp), f"{path}: type {type(got)} != {type(exp)}"
    if isinstance(exp, float) and exp != exp:
        assert got != got
    else:
        assert got == exp, f"{path}: {got!r} != {exp!r}"


def same_memory_pattern(got, exp, src_n, src_p, path="result"):
    """A result shares memory with the source in npc exactly when it does in NumPy."""
    if isinstance(exp, (tuple, list)):
        for i, (g, e) in enumerate(zip(got, exp)):
            same_memory_pattern(g, e, src_n, src_p, f"{path}[{i}]")
        return
    if isinstance(exp, np.ndarray) and exp.size:
        n_shares = np.may_share_memory(exp, src_n)
        p_shares = npc.may_share_memory(got, src_p)
        assert n_shares == p_shares, f"{path}: shares memory with the input: npc {p_shares}, NumPy {n_shares}"


def check(fn, *arrays, layout="c", views=True):
    """Runs fn(lib, *arrays) with lib = numpy and lib = npc and compares (exception types too)."""
    ns, ps = zip(*(pair(a, layout) for a in arrays)) if arrays else ((), ())
    try:
        exp = fn(np, *ns)
    except Exception as e:  # noqa: BLE001 - NumPy's exception type is the oracle
        with pytest.raises(type(e)):
            fn(npc, *ps)
        return None
    got = fn(npc, *ps)
    assert_same(got, exp)
    if views and ns:
        same_memory_pattern(got, exp, ns[0], ps[0])
    return got, exp
