"""Compiled code on bool views holding bytes other than 0 and 1 (Note [bool bytes in kernels]
in src/fusion/kir_bool_bytes.cpp).

NumPy moves bool elements as bytes (a copy, astype(bool), where, concatenate keep a 2 or a
255) and reads any nonzero byte as True where it computes (logical and bitwise ops, casts to
other dtypes, reductions). Compiled functions, both backends, must give NumPy's bytes, and
eager npc's.
"""
import numpy as np
import pytest

import npc

BACKENDS = ["fused", "eager"]


def odd_bools(n=1003, seed=0):
    """A bool view of random bytes, most of them neither 0 nor 1 (zeros included)."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 256, n, dtype=np.uint8)
    b[::7] = 0
    b[1::11] = 1
    return b.view(bool)


SMALL = np.frombuffer(bytes([0, 2, 255, 1]), np.uint8).view(bool)

# Functions of bool views a (1-D) and a mask m of the same length.
MOVES = {
    "copy": lambda a, m: a.copy(),
    "astype_bool": lambda a, m: a.astype(bool),
    "reversed_copy": lambda a, m: a[::-1].copy(),
    "strided_copy": lambda a, m: a[::3].copy(),
    "where_false": lambda a, m: np.where(m, a, False),
    "where_true": lambda a, m: np.where(m, True, a),
    "where_views": lambda a, m: np.where(m, a, a[::-1]),
    "where_computed": lambda a, m: np.where(m, a, ~a),
    "concatenate": lambda a, m: np.concatenate([a, a[::-1]]),
    "stack": lambda a, m: np.stack([a, a]),
    "reshape_transpose": lambda a, m: a[: (a.size // 4) * 4].reshape(-1, 4).T.copy(),
    "flip": lambda a, m: np.flip(a),
    "take": lambda a, m: np.take(a, np.arange(a.size)[::-2]),
    "moved_and_computed": lambda a, m: (a.copy(), a & m, a.astype(np.int8)),
}
COMPUTES = {
    "and": lambda a, m: a & m,
    "or": lambda a, m: a | m,
    "xor": lambda a, m: a ^ m,
    "invert": lambda a, m: ~a,
    "logical_not": lambda a, m: np.logical_not(a),
    "logical_and": lambda a, m: np.logical_and(a, a[::-1]),
    "to_int8": lambda a, m: a.astype(np.int8),
    "to_float": lambda a, m: a.astype(np.float64),
    "add": lambda a, m: a + a,
    "equal_true": lambda a, m: a == True,  # noqa: E712 - the comparison is the test
    "sum": lambda a, m: np.sum(a),
    "any_all": lambda a, m: (np.any(a & ~m), np.all(a | m)),
    "count_nonzero": lambda a, m: np.count_nonzero(a),
    "where_cond": lambda a, m: np.where(a, 1, 2),
}


def as_bytes(r):
    """Results as comparable bytes (bool results viewed as uint8)."""
    if isinstance(r, tuple):
        return tuple(as_bytes(x) for x in r)
    r = np.asarray(r)
    return (r.dtype, r.shape, r.view(np.uint8).tolist() if r.dtype == bool else r.tolist())


def eager(fn, a, m):
    r = fn(npc.asarray(a), npc.asarray(m))
    return tuple(np.asarray(x) for x in r) if isinstance(r, tuple) else np.asarray(r)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(MOVES) + list(COMPUTES))
@pytest.mark.parametrize("size", ["small", "large"])
def test_bool_bytes_as_numpy(name, backend, size, tmp_path):
    a = SMALL if size == "small" else odd_bools()
    m = np.arange(a.size) % 3 != 1
    fn = MOVES.get(name) or COMPUTES[name]
    want = as_bytes(fn(a, m))
    assert as_bytes(eager(fn, a, m)) == want, "eager npc"
    with npc.config.patch(cache_dir=str(tmp_path)):
        cf = npc.compile(fn, backend=backend)
        for _ in range(2):  # trace, then replay
            assert as_bytes(cf(a, m)) == want


def test_fused_copy_keeps_bytes_in_a_kernel(capfd):
    """The fused kernel itself copies the bytes (no eager fallback, no graph break)."""
    from _fused_source import compiled_source_and_result

    a = odd_bools()
    m = np.arange(a.size) % 2 == 0
    out, src = compiled_source_and_result(lambda a, m: (a.copy(), np.where(m, a, False), a & m), (a, m), capfd)
    assert out[0].view(np.uint8).tolist() == a.view(np.uint8).tolist()
    assert out[1].view(np.uint8).tolist() == np.where(m, a, False).view(np.uint8).tolist()
    assert out[2].view(np.uint8).tolist() == (a & m).view(np.uint8).tolist()
    assert "_u8" in src
