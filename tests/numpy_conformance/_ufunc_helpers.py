"""Shared helpers of the ufunc/reduction conformance tests: the op table as test data,
inputs per dtype, shape kinds, and comparison against NumPy under ULP bounds read from
ulp_tolerances.csv."""
import csv
import os
import warnings

import numpy as np

import npc
from npc import _core

HERE = os.path.dirname(__file__)

CHARS = "?bBhHiIlLefdFD"
NATIVE = {c: np.dtype(c if c not in "lL" else ("int64" if c == "l" else "uint64")) for c in CHARS}


def load_ulps():
    bounds = {}
    with open(os.path.join(HERE, "ulp_tolerances.csv")) as f:
        rows = [line for line in f if not line.startswith("#")]
    for row in csv.DictReader(rows):
        bounds[(row["op"], row["kind"])] = int(row["ulp"])
    return bounds


ULPS = load_ulps()

# Rows of the op table: (name, kind, nin, nout, identity, differentiable, loops, resolver,
# fpe_check, fpe, at, dunders, ...): include/npc/ops.def. The tests pick their ufuncs from
# its columns (ufuncs(...), representatives(...)), never from lists of names.
TABLE = _core.op_table()
UFUNC_ROWS = [r for r in TABLE if r[1] == 0]
# Reductions of the table (sum, prod, max, min, any, all), in table order.
REDUCTIONS = [r.name for r in TABLE if r.kind == 1]
# Identity column codes (ops.def: None_ 0, ..., ReorderableNone 7).
NO_IDENTITY, REORDERABLE_NONE = 0, 7


def binary(r):
    """A binary ufunc with one output (the ones with reduce/accumulate/outer/at)."""
    return r.nin == 2 and r.nout == 1


def shift(r):
    """A shift (the row of Python's << or >>): its second operand is a count in [0, bits)."""
    return r.dunders[:1] in (("__lshift__",), ("__rshift__",))


def unary(r):
    """A unary ufunc with one output."""
    return r.nin == 1 and r.nout == 1


def reorderable(r):
    """NumPy reduces it over several axes at once: an identity or ReorderableNone."""
    return r.identity != NO_IDENTITY


def kinds(r):
    """NumPy kinds ("b", "i", "u", "f", "c") of the first inputs of a ufunc row's loops."""
    return {NATIVE[sig[0]].kind for sig in r.loops.split()}


def ufuncs(*preds):
    """Names of the ufunc rows (table order) for which every predicate holds."""
    return [r.name for r in UFUNC_ROWS if all(p(r) for p in preds)]


SHIFTS = ufuncs(shift)


def representatives(*preds, key=lambda r: (r.nin, r.nout, r.resolver, r.fpe_check)):
    """One ufunc per class `key` (default: arity, type resolver and whether it reads the
    floating-point status), the first of the table, among the rows for which every
    predicate holds."""
    seen, names = set(), []
    for r in UFUNC_ROWS:
        if all(p(r) for p in preds) and key(r) not in seen:
            seen.add(key(r))
            names.append(r.name)
    return names


def loop_dtypes(row):
    """The distinct first-input dtypes of a ufunc row's loops."""
    seen = []
    for sig in row[6].split():
        c = sig[0]
        if NATIVE[c] not in seen:
            seen.append(NATIVE[c])
    return seen


def ulp_bound(op, dtype):
    kind = dtype.kind
    if kind not in "fc":
        return 0
    return ULPS.get((op, kind), 0)


# ---------------------------------------------------------------- inputs
# Operands of the ufuncs whose domain is not every number, keyed by the op table's rows
# (test_input_domains.py checks that every row's values are in its domain, and that every
# key is a row). Real parts are uniform over REAL_RANGE (DEFAULT_RANGE otherwise); complex
# ones add an imaginary part uniform over IMAG_RANGE (DEFAULT_IMAG otherwise); the base of
# POSITIVE_BASE is |v| + 0.1 in float loops. Integer operands: INT_OPERAND[(op, role)]; the
# count of a shift (SHIFTS, from the table) is below the bit width.
DEFAULT_RANGE, DEFAULT_IMAG = (-10, 10), (-3, 3)
REAL_RANGE = {
    "arcsin": (-0.95, 0.95), "arccos": (-0.95, 0.95), "arctanh": (-0.95, 0.95), "arccosh": (1.05, 10),
    "log": (0.05, 20), "log2": (0.05, 20), "log10": (0.05, 20), "sqrt": (0.05, 20), "log1p": (-0.9, 20),
    # Results that grow fast (overflow in float16 beyond a few units).
    "exp": (-3, 3), "exp2": (-3, 3), "expm1": (-3, 3), "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3),
    "power": (-3, 3), "float_power": (-3, 3), "ldexp": (-3, 3),
}
# Near the real axis for the functions with branch cuts on it.
IMAG_RANGE = {"arcsin": (-0.75, 0.75), "arccos": (-0.75, 0.75), "arctanh": (-0.75, 0.75), "log": (-0.75, 0.75),
              "log1p": (-0.75, 0.75), "sqrt": (-0.75, 0.75), "arccosh": (0.1, 3)}
POSITIVE_BASE = {"power", "float_power"}
# (op, operand index) -> "shift" (a count below the bit width), "exponent" (0..4), "base"
# (-3..3, unsigned 0..3), "nonzero" (+-1..4), "divisor" (the default values, 0 replaced by 3).
INT_OPERAND = {
    ("power", 1): "exponent", ("power", 0): "base",
    ("reciprocal", 0): "nonzero", ("floor_divide", 1): "divisor", ("remainder", 1): "divisor",
    ("fmod", 1): "divisor", ("divmod", 1): "divisor", ("gcd", 1): "divisor", ("lcm", 1): "divisor",
}


def values(dtype, op, n, seed=0, role=0):
    """Deterministic, in-domain values of `dtype` for op `op` (role: operand index)."""
    rng = np.random.default_rng(seed + 17 * role)
    k = dtype.kind
    if k == "b":
        return rng.integers(0, 2, n).astype(bool)
    if k in "iu":
        info = np.iinfo(dtype)
        form = "shift" if op in SHIFTS and role == 1 else INT_OPERAND.get((op, role))
        if form == "shift":
            return rng.integers(0, info.bits, n).astype(dtype)
        if form == "exponent":
            return rng.integers(0, 5, n).astype(dtype)
        if form == "base":
            return rng.integers(0 if k == "u" else -3, 4, n).astype(dtype)
        if form == "nonzero":
            v = rng.integers(1, 5, n)
            if k == "i":
                v = v * rng.choice([-1, 1], n)
            return v.astype(dtype)
        lo = 0 if k == "u" else -50
        v = rng.integers(lo, 50, n)
        if form == "divisor":
            v[v == 0] = 3
        return v.astype(dtype)
    real = dtype if k == "f" else np.dtype(f"f{dtype.itemsize // 2}")
    v = rng.uniform(*REAL_RANGE.get(op, DEFAULT_RANGE), n)
    if op in POSITIVE_BASE and role == 0 and k == "f":
        v = np.abs(v) + 0.1
    v = v.astype(real)
    if k == "c":
        w = rng.uniform(*IMAG_RANGE.get(op, DEFAULT_IMAG), n).astype(real)
        return (v + 1j * w).astype(dtype)
    return v


def second_operand_dtype(row, dtype):
    """dtype of the second input in the loop whose first input is `dtype` (ldexp: int)."""
    for sig in row[6].split():
        if NATIVE[sig[0]] == dtype:
            return NATIVE[sig[1]]
    return dtype


def shape_kinds():
    """(name, function(np_array_1d_of_len_35) -> numpy array of that kind)."""
    return [
        ("0d", lambda v: v[:1].reshape(())),
        ("empty", lambda v: v[:0]),
        ("one", lambda v: v[:1]),
        ("seven", lambda v: v[:7]),
        ("strided", lambda v: v[:14][::2]),
        ("negstride", lambda v: v[:7][::-1]),
        ("transposed", lambda v: v[:12].reshape(4, 3).T),
        ("fortran", lambda v: np.asfortranarray(v[:12].reshape(3, 4))),
    ]


def to_npc(x):
    if isinstance(x, np.ndarray):
        return npc.asarray(x)
    return x


# ---------------------------------------------------------------- comparison
def _as_ordered_ints(x):
    """Float bit patterns mapped to integers whose difference counts ULPs."""
    x = np.ascontiguousarray(x)
    it = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    i = x.view(it).astype(np.int64)
    big = np.int64(1) << (8 * x.dtype.itemsize - 1)
    return np.where(i < 0, -(i + big) if x.dtype.itemsize == 8 else -(i + int(big)), i)


def assert_same(got, exp, op="", ulp=0, what=""):
    """npc result `got` equals NumPy's `exp`: type class (scalar vs array), dtype, shape and
    values (NaN positions equal, signed zeros equal when exact, within `ulp` otherwise)."""
    if isinstance(exp, tuple):
        assert isinstance(got, tuple) and len(got) == len(exp), what
        for g, e in zip(got, exp):
            assert_same(g, e, op, ulp, what)
        return
    if isinstance(exp, np.ndarray):
        assert isinstance(got, npc.ndarray), f"{what}: expected an array, got {type(got)}"
        g = np.asarray(got)
    elif isinstance(exp, np.generic):
        assert isinstance(got, np.generic), f"{what}: expected NumPy scalar {type(exp)}, got {type(got)}"
        g = np.asarray(got)
    else:
        assert type(got) is type(exp), f"{what}: {type(got)} != {type(exp)}"
        assert got == exp or (got != got and exp != exp), f"{what}: {got} != {exp}"
        return
    e = np.asarray(exp)
    assert g.dtype == e.dtype, f"{what}: dtype {g.dtype} != {e.dtype}"
    assert g.shape == e.shape, f"{what}: shape {g.shape} != {e.shape}"
    compare_values(g, e, ulp, what)


def compare_values(g, e, ulp, what):
    """Values of two NumPy arrays of equal dtype and shape (complex: per component)."""
    if e.dtype.kind == "c":
        compare_values(g.real.copy(), e.real.copy(), ulp, what + " (real)")
        compare_values(g.imag.copy(), e.imag.copy(), ulp, what + " (imag)")
        return
    if e.dtype.kind != "f":
        assert np.array_equal(g, e), f"{what}: {g} != {e}"
        return
    gn, en = np.isnan(g), np.isnan(e)
    assert np.array_equal(gn, en), f"{what}: NaN positions differ: {g} vs {e}"
    gi, ei = g[~gn], e[~en]
    if ulp == 0:
        assert np.array_equal(gi, ei), f"{what}: {g} != {e}"
        assert np.array_equal(np.signbit(gi), np.signbit(ei)), f"{what}: signed zeros differ: {g} vs {e}"
        return
    inf = np.isinf(ei) | np.isinf(gi)
    assert np.array_equal(gi[inf], ei[inf]), f"{what}: infinities differ: {g} vs {e}"
    d = np.abs(_as_ordered_ints(gi[~inf]) - _as_ordered_ints(ei[~inf]))
    assert d.size == 0 or d.max() <= ulp, f"{what}: {d.max()} ULP > {ulp}: {g} vs {e}"


def run_both(fn_np, fn_npc, args_np, args_npc, kwargs=None):
    """(numpy result or exception, npc result or exception, numpy warnings, npc warnings)."""
    kwargs = kwargs or {}
    out = []
    for fn, args in ((fn_np, args_np), (fn_npc, args_npc)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - compared below
                r = exc
        out.append((r, sorted({str(x.message) for x in w if issubclass(x.category, RuntimeWarning)})))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def check_exceptions(e, g, what):
    """Both raised: npc's exception is NumPy's type (or a subclass). One raised: failure."""
    if isinstance(e, Exception) or isinstance(g, Exception):
        assert isinstance(e, Exception), f"{what}: npc raised {g!r}, NumPy returned"
        assert isinstance(g, Exception), f"{what}: NumPy raised {e!r}, npc returned {g!r}"
        assert isinstance(g, type(e)) or type(e).__mro__[1] in type(g).__mro__, \
            f"{what}: {type(g).__name__} is not NumPy's {type(e).__name__} ({g} / {e})"
        return True
    return False
