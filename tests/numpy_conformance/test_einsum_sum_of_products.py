"""einsum contractions over few elements run as NumPy's sum-of-products loop (Note [einsum sum
of products] in src/ops/einsum.cpp): values against numpy.einsum over dtypes and operand
layouts, exact where NumPy's loop adds the products in the same order, and the result layout."""
import numpy as np
import pytest

import npc
from dtypes import assert_same

DTYPES = ["float32", "float64", "complex64", "complex128"]


def randn(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def layouts(x):
    """(name, array) with the values of x: C order, Fortran order, a strided view, reversed
    axes, and a transposed copy viewed back."""
    yield "C", x
    yield "F", np.asfortranarray(x)
    yield "step", np.repeat(x, 2, axis=-1)[..., ::2]
    yield "neg", np.ascontiguousarray(x[::-1])[::-1]
    yield "T", np.ascontiguousarray(x.T).T


# One summed label, which NumPy adds into each output element in order: the same bits (unless
# that label is contiguous in both operands: NumPy then runs it as its inner loop, a dot
# product with its own order of sums, see summed_inner).
EXACT = [
    ("nchw,kc->nkhw", (3, 3, 5, 6), (4, 3)),      # a convolution tap
    ("nchw,kc->nkhw", (2, 2, 40, 40), (3, 2)),    # long rows
    ("ij,jk->ik", (5, 3), (3, 7)),
    ("bij,bjk->bik", (3, 4, 2), (3, 2, 5)),
    ("ijk,jl->ilk", (3, 4, 5), (4, 2)),
    ("ij,ij->ij", (5, 6), (5, 6)),                # no summed label
    ("i,j->ij", (5,), (6,)),
    ("ij,jk->ki", (6, 4), (4, 9)),
    ("ij,kj->ikj", (2, 3), (4, 3)),
]


def summed_inner(sub, a, b):
    """Whether a summed label of `sub` has unit stride in both operands."""
    ins, out = sub.split("->")
    la, lb = ins.split(",")
    for c in set(la) & set(lb) - set(out):
        if abs(a.strides[la.index(c)]) == a.itemsize and abs(b.strides[lb.index(c)]) == b.itemsize:
            return True
    return False


def assert_close_sum(got, ref, sub, a, b):
    """Within the error bound of sums of k products, k the number of summed terms at most."""
    g = np.asarray(got)
    assert g.dtype == ref.dtype and g.shape == ref.shape
    k = a.size * b.size // max(ref.size, 1)
    bound = np.einsum(sub, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    tol = 4 * k * np.finfo(ref.dtype).eps * bound
    assert np.all(np.abs(g.astype(np.complex128) - ref.astype(np.complex128)) <= tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sub,sa,sb", EXACT, ids=[e[0] + str(e[1]) for e in EXACT])
def test_one_summed_label_matches_numpy_exactly(sub, sa, sb, dtype):
    a0, b0 = randn(sa, dtype, 1), randn(sb, dtype, 2)
    for (_, a), (_, b) in zip(layouts(a0), reversed(list(layouts(b0)))):
        got, ref = npc.einsum(sub, npc.asarray(a), npc.asarray(b)), np.einsum(sub, a, b)
        if summed_inner(sub, a, b):
            assert_close_sum(got, ref, sub, a, b)
        else:
            assert_same(got, ref)


# Several summed labels, or one NumPy runs as its inner loop: the order of NumPy's sums depends
# on its iterator, so the values agree within the error bound of a k-term sum.
CLOSE = [
    ("ij,jk->i", (6, 4), (4, 3)),
    ("abc,cd->ad", (3, 4, 5), (5, 6)),
    ("ij,j->i", (7, 8), (8,)),
    ("ij,i->j", (7, 8), (7,)),
    ("ijk,jk->i", (4, 5, 6), (5, 6)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sub,sa,sb", CLOSE, ids=[e[0] for e in CLOSE])
def test_several_summed_labels_close_to_numpy(sub, sa, sb, dtype):
    a0, b0 = randn(sa, dtype, 3), randn(sb, dtype, 4)
    for (_, a), (_, b) in zip(layouts(a0), layouts(b0)):
        assert_close_sum(npc.einsum(sub, npc.asarray(a), npc.asarray(b)), np.einsum(sub, a, b), sub, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_integer_values_exact(dtype):
    # Sums of small integers are exact in any order: every path gives NumPy's values.
    rng = np.random.default_rng(5)
    for sub, sa, sb in EXACT + CLOSE:
        a = rng.integers(-3, 4, sa).astype(dtype)
        b = rng.integers(-3, 4, sb).astype(dtype)
        assert_same(npc.einsum(sub, npc.asarray(a), npc.asarray(b)), np.einsum(sub, a, b))


def test_signed_zeros_and_special_values():
    # Each element starts from +0 as in NumPy: a lone -0 product gives +0; inf and nan propagate.
    a = np.array([[-0.0, 1.0], [np.inf, np.nan]])
    b = np.array([[1.0, 0.0], [-1.0, 2.0]])
    for sub in ("ij,jk->ik", "ij,kj->ik", "ij,jk->ki"):
        with np.errstate(all="ignore"):
            ref = np.einsum(sub, a, b)
        assert_same(npc.einsum(sub, npc.asarray(a), npc.asarray(b)), ref)
    z = np.array([-0.0, -0.0])
    assert_same(npc.einsum("i,j->ij", npc.asarray(z), npc.asarray(np.array([1.0]))),
                np.einsum("i,j->ij", z, np.array([1.0])))


def test_empty_and_zero_length_sums():
    a, b = np.ones((3, 0)), np.ones((0, 4))
    assert_same(npc.einsum("ij,jk->ik", npc.asarray(a), npc.asarray(b)), np.einsum("ij,jk->ik", a, b))
    a, b = np.ones((0, 2)), np.ones((2, 4))
    assert_same(npc.einsum("ij,jk->ik", npc.asarray(a), npc.asarray(b)), np.einsum("ij,jk->ik", a, b))


def test_broadcast_labels_and_mixed_dtypes():
    a = randn((1, 3, 4), "float64", 6)
    b = randn((5, 4, 2), "float32", 7)
    assert_same(npc.einsum("...ij,...jk->...ik", npc.asarray(a), npc.asarray(b)),
                np.einsum("...ij,...jk->...ik", a, b))
    c = randn((3, 4), "complex64", 8)
    d = randn((4, 2), "float64", 9)
    assert_same(npc.einsum("ij,jk->ik", npc.asarray(c), npc.asarray(d)), np.einsum("ij,jk->ik", c, d))


def test_result_is_c_contiguous_in_output_order():
    x = npc.asarray(randn((2, 3, 6, 6), "float32", 10))
    w = npc.asarray(randn((4, 3), "float32", 11))
    r = npc.einsum("nchw,kc->nkhw", x[:, :, 1:5, 0:4], w)
    assert r.flags["C_CONTIGUOUS"]
    r = npc.einsum("ij,jk->ki", npc.asarray(randn((3, 2), "float64", 12)), npc.asarray(randn((2, 5), "float64", 13)))
    assert r.flags["C_CONTIGUOUS"] and r.shape == (5, 3)


def test_large_output_uses_threads_consistently():
    # Big enough to be split among threads: the same bits as one thread and as NumPy.
    a = randn((64, 3, 34, 34), "float32", 14)
    b = randn((8, 3), "float32", 15)
    ref = np.einsum("nchw,kc->nkhw", a, b)
    old = npc.get_num_threads()
    try:
        for t in (1, 2):
            npc.set_num_threads(t)
            assert_same(npc.einsum("nchw,kc->nkhw", npc.asarray(a), npc.asarray(b)), ref)
    finally:
        npc.set_num_threads(old)
