"""Completeness of the op table (include/npc/ops.def) and of the tables keyed by its rows.

Every per-op fact is a column of ops.def or a table keyed by its rows; each test here
iterates every row of one column or table (read through npc._core.op_table()) and fails on
a missing entry or on a stale one (an entry that contradicts the row's loops, or that NumPy
contradicts). How to add an op: docs/architecture.md.
"""
import operator

import numpy as np
import pytest

import npc
from npc import _core

ROWS = _core.op_table()
UFUNC, REDUCE, PRIM = 0, 1, 2
BY_NAME = {r.name: r for r in ROWS}
UFUNCS = [r for r in ROWS if r.kind == UFUNC]
# Dtype kinds of ops.def loop characters: b bool, i integer, f float, c complex.
KIND = {c: ("b" if c == "?" else "i" if c in "bBhHiIlLqQ" else "f" if c in "efd" else "c") for c in "?bBhHiIlLqQefdFD"}


def loops(row):
    """[(inputs, outputs)] of a ufunc row's loops, as ops.def characters."""
    return [tuple(sig.split("->")) for sig in row.loops.split()]


def test_every_row_is_one_kind_with_a_unique_name():
    assert len(BY_NAME) == len(ROWS)
    assert {r.kind for r in ROWS} <= {UFUNC, REDUCE, PRIM}
    for r in ROWS:
        if r.kind == UFUNC:
            assert r.loops and all(len(i) == r.nin and len(o) == r.nout for i, o in loops(r)), r.name
        else:
            assert (r.resolver, r.fpe_check, r.at, r.dunders) == ("Default", True, "", ()), r.name


def test_resolver_column():
    """The resolver column agrees with the loops: comparisons and logical ops give bool,
    uniform ops have one dtype per loop, true division and absolute have their own loops."""
    for r in UFUNCS:
        ls = loops(r)
        if r.resolver == "Comparison":
            assert r.nin == 2 and all(o == "?" for _, o in ls), r.name
        elif r.resolver == "Logical":
            assert all(o == "?" for _, o in ls) and r.name.startswith("logical_"), r.name
        elif r.resolver == "Uniform":
            assert all(len(set(i + o)) == 1 for i, o in ls), r.name
        elif r.resolver == "TrueDivide":
            assert r.nin == 2 and all(KIND[c] in "fc" for i, o in ls for c in i + o), r.name
        elif r.resolver == "Absolute":
            assert r.nin == 1 and any(KIND[i] == "c" and KIND[o] == "f" for i, o in ls), r.name
        else:
            assert r.resolver == "Default", (r.name, r.resolver)
        # A bool-valued ufunc of two operands whose loops are not (bool, bool) only is either
        # a comparison or a logical op (their promotion differs from the default one).
        if r.nin == 2 and r.nout == 1 and all(o == "?" for _, o in ls) and len(ls) > 1:
            assert r.resolver in ("Comparison", "Logical"), r.name


def test_fpe_columns():
    """fpe lists kinds from "DOUI" (finite operands) or "doui" (inf/NaN only), each once;
    ops that cannot raise (comparisons, logical ops) do not read the FP status; an op with
    integer and bool loops only has no kinds (a reduction or primitive: its ufunc's)."""
    for r in ROWS:
        assert set(r.fpe) <= set("DOUIdoui"), r.name
        assert len({c.upper() for c in r.fpe}) == len(r.fpe), r.name
        if r.kind == UFUNC:
            if r.resolver in ("Comparison", "Logical"):
                assert not r.fpe_check and not r.fpe, r.name
            if r.fpe:
                assert any(KIND[c] in "fc" for i, o in loops(r) for c in i + o), r.name
        if r.kind == REDUCE:
            assert set(r.fpe) <= set(BY_NAME[r.loops].fpe) | set("OUi"), r.name


@pytest.mark.parametrize("row", [r for r in UFUNCS if not r.fpe_check], ids=lambda r: r.name)
def test_ops_without_fpe_check_raise_nothing_in_numpy(row):
    """NoFpe rows: NumPy's loops of the op raise no FP error on inf/NaN/zero/extreme operands
    of a float loop (so skipping the status read loses no warning)."""
    sigs = [(i, o) for i, o in loops(row) if KIND[i[0]] == "f" and len(set(i)) == 1]
    if not sigs:
        pytest.skip("no uniform float loop")
    t = np.dtype(sigs[-1][0][0])
    big = np.finfo(t).max
    vals = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, big, -big, np.finfo(t).tiny], dtype=t)
    args = [vals] if row.nin == 1 else [np.repeat(vals, len(vals)), np.tile(vals, len(vals))]
    with np.errstate(all="raise"):
        getattr(np, row.name)(*args)


def test_at_column():
    """ufunc.at's indexed loops: NumPy kinds of binary single-output ufuncs with such loops."""
    numpy_kind = {"b": "b", "i": "iu", "f": "f", "c": "c"}
    for r in ROWS:
        assert set(r.at) <= set("iufc") and len(set(r.at)) == len(r.at), r.name
        if r.at:
            assert r.kind == UFUNC and r.nin == 2 and r.nout == 1, r.name
            have = "".join(numpy_kind[KIND[i[0]]] for i, _ in loops(r))
            assert set(r.at) <= set(have), r.name


def _samples(row):
    i, _ = next((i, o) for i, o in loops(row)[::-1] if len(set(i)) == 1)
    t = np.dtype(i[0])
    a = np.array([3, 5, 7, 1], dtype=t) if t.kind != "b" else np.array([True, False, True, False])
    b = np.array([2, 1, 3, 4], dtype=t) if t.kind != "b" else np.array([True, True, False, False])
    return a, b


def test_dunders_column():
    """Each listed operator of numpy.ndarray computes the row's ufunc ("forward [reflected
    [in-place]]", named as Python names them), each name is listed once, npc.ndarray has it."""
    seen = set()
    for r in ROWS:
        assert not (seen & set(r.dunders)), r.name
        seen |= set(r.dunders)
        if not r.dunders:
            continue
        assert r.kind == UFUNC and len(r.dunders) <= (1 if r.nin == 1 else 3), r.name
        stem = r.dunders[0][2:]
        assert r.dunders == ("__" + stem, "__r" + stem, "__i" + stem)[:len(r.dunders)], r.name
        a, b = _samples(r)
        uf = getattr(np, r.name)
        for pos, d in enumerate(r.dunders):
            assert hasattr(npc.ndarray, d), d
            if r.nin == 1:
                got, want = getattr(a, d)(), uf(a)
            elif pos == 2:
                got, want = getattr(a.copy(), d)(b), uf(a, b)
            else:
                got, want = getattr(a, d)(b), (uf(b, a) if pos == 1 else uf(a, b))
            assert np.array_equal(np.asarray(got), np.asarray(want)), d


# Operators of numpy.ndarray that are not ufuncs of the table.
NOT_UFUNC_OPERATORS = {"__contains__", "__getitem__", "__setitem__", "__delitem__", "__index__",
                       "__matmul__", "__rmatmul__", "__imatmul__"}


def test_every_ndarray_operator_is_listed():
    """Every arithmetic, bitwise and comparison operator of numpy.ndarray (forward, reflected
    and in-place) is in the dunders column of the ufunc it computes: an operator missing
    there would be left unbound on npc.ndarray."""
    names = {"__" + n.rstrip("_") + "__" for n in operator.__all__}
    names |= {"__r" + n[2:] for n in names} | {"__divmod__", "__rdivmod__"}
    listed = {d for r in ROWS for d in r.dunders}
    missing = sorted(d for d in dir(np.ndarray) if d in names and d not in listed and d not in NOT_UFUNC_OPERATORS)
    assert not missing


def test_differentiable_column():
    """Diff needs an inexact output loop; a reduction is differentiable when its ufunc is
    (any/all are not)."""
    for r in ROWS:
        if r.kind == UFUNC and r.differentiable:
            assert any(KIND[c] in "fc" for _, o in loops(r) for c in o), r.name
        if r.kind == REDUCE:
            uf = BY_NAME[r.loops]
            assert uf.kind == UFUNC and uf.nin == 2 and uf.nout == 1, r.name
            assert r.differentiable == uf.differentiable, r.name
    assert not BY_NAME["any"].differentiable and not BY_NAME["all"].differentiable


def test_vmath_column():
    """vmath lists float32/float64 loops ("f", "d", each once; '*' after one: only with
    NPC_VECTOR_MATH=all) of unary ufuncs that have those loops (src/ops/math_simd.cpp checks
    at compile time that each such row has a libmvec function, and no other row does)."""
    for r in ROWS:
        if r.kind != UFUNC:
            assert r.vmath == "", r.name
            continue
        items = r.vmath.split()
        assert all(i in ("f", "d", "f*", "d*") for i in items), r.name
        assert len({i[0] for i in items}) == len(items), r.name
        if items:
            assert r.nin == 1 and r.nout == 1, r.name
            assert {i[0] for i in items} <= {i for i, _ in loops(r)}, r.name
    assert any(r.vmath for r in ROWS)


def test_fused_reduction_column():
    """Reductions list the dtype kinds generated code reduces; each is a kind of their ufunc's loops."""
    for r in ROWS:
        if r.kind != REDUCE:
            assert r.fused == "", r.name
            continue
        have = {KIND[i[0]] for i, _ in loops(BY_NAME[r.loops])}
        assert r.fused and set(r.fused) <= have | {"b", "i"}, r.name


def test_emitter_table():
    """Every ufunc row has a C++ pattern or an explicit Unsupported(reason); other rows have
    none (they are lowered structurally); a pattern's dtype kinds are kinds of the row's loops."""
    for r in ROWS:
        for target, (status, text, kinds, overrides) in r.emit.items():
            if r.kind != UFUNC:
                assert status == "missing", (target, r.name)
                continue
            assert status in ("pattern", "unsupported"), (target, r.name)
            assert text, (target, r.name)
            if status == "pattern":
                have = {KIND[i[0]] for i, _ in loops(r)}
                assert kinds and set(kinds) <= have, (target, r.name, kinds)
                # Note [one rule per float loop]: no float pattern of its own in generated code.
                assert set(overrides) <= {"complex"}, (target, r.name)
                assert "complex" not in overrides or "c" in kinds, (target, r.name)
            else:
                assert not kinds and not overrides, (target, r.name)


@pytest.mark.parametrize("row", [r for r in UFUNCS if r.nin == 2 and r.nout == 1], ids=lambda r: r.name)
def test_identity_column_reorderable(row):
    """NumPy's identity (ufunc.identity, and whether a ufunc without one reduces over several
    axes at once: ReorderableNone) matches the column, and npc reduces over two axes when
    NumPy does."""
    sigs = [i for i, o in loops(row) if len(set(i + o)) == 1]
    if not sigs:
        pytest.skip("no loop reduces in its own dtype")
    a = np.ones((2, 2), dtype=np.dtype(sigs[-1][0]))
    uf = getattr(np, row.name)
    try:
        want = uf.reduce(a, axis=(0, 1))
    except ValueError as e:
        assert "not reorderable" in str(e)
        reorderable = False
    else:
        reorderable = True
    assert reorderable == (row.identity != 0), row.name  # 0: None_, 7: ReorderableNone
    assert (uf.identity is None) == (row.identity in (0, 7)), row.name
    if reorderable:
        np.testing.assert_array_equal(np.asarray(getattr(npc, row.name).reduce(npc.asarray(a), axis=(0, 1))), want)


@pytest.mark.parametrize("row", [r for r in UFUNCS if r.nin == 2 and r.nout == 1 and r.identity != 0],
                         ids=lambda r: r.name)
def test_reorderable_integer_loops_are_exact(row):
    """Note [chunked reductions] in src/ops/reduce.cpp: the integer and bool loops of the
    reorderable ufuncs (identity column not None_) reduce in chunks split among threads, which
    needs them associative: NumPy's loop gives (a op b) op c == a op (b op c) bit for bit, at
    the extremes of the dtype too."""
    sigs = [i[0] for i, o in loops(row) if len(set(i + o)) == 1 and KIND[i[0]] in "bi"]
    if not sigs:
        pytest.skip("no integer or bool loop")
    rng = np.random.default_rng(5)
    for c in sigs:
        t = np.dtype(c)
        if t.kind == "b":
            vals = np.array([False, True])
        else:
            info = np.iinfo(t)
            vals = np.unique(np.array([info.min, info.min + 1, -7, -1, 0, 1, 3, 12, info.max - 1, info.max],
                                      dtype=object).clip(info.min, info.max).astype(t))
        a, b, c3 = (rng.choice(vals, 2000) for _ in range(3))
        a = np.concatenate([a, np.repeat(vals, len(vals) ** 2)])
        b = np.concatenate([b, np.tile(np.repeat(vals, len(vals)), len(vals))])
        c3 = np.concatenate([c3, np.tile(vals, len(vals) ** 2)])
        uf = getattr(np, row.name)
        with np.errstate(all="ignore"):
            left, right = uf(uf(a, b), c3), uf(a, uf(b, c3))
        np.testing.assert_array_equal(left, right, err_msg=f"{row.name} {t}")
