"""ufunc.at against NumPy: every index form NumPy accepts (integers, negative and repeated
indices, slices, tuples of arrays, boolean masks, Ellipsis, mixed), targets of every layout
(C, Fortran, transposed, strided, negative strides, 0-d, 3-d), values broadcast to the
indexed shape, every native dtype, unary and binary ufuncs. The updated array, exception
types and warnings must be NumPy's. npc's NumPy fallback is an error here."""
import warnings

import numpy as np
import pytest

import npc

from _ufunc_helpers import NATIVE, assert_same, representatives, ufuncs, ulp_bound



LAYOUTS = {
    "c": lambda x: x,
    "fortran": lambda x: np.asfortranarray(x),
    "transposed": lambda x: x.T,
    "strided": lambda x: x[::2, ::3] if x.ndim == 2 else x[::2],
    "negstride": lambda x: x[::-1, ::-2] if x.ndim == 2 else x[::-1],
    "3d": lambda x: x.reshape(2, 3, -1)[:, ::-1],
}

INDEX = {
    "int": 1,
    "neg-int": -1,
    "repeats": [0, 1, 1, 0, -1],
    "slice": slice(None, None, 2),
    "neg-slice": slice(None, None, -1),
    "tuple-arrays": (np.array([0, 1, 1, 0]), np.array([0, -1, -1, 1])),
    "bool": "mask",
    "ellipsis": Ellipsis,
    "mixed": (slice(None), [0, 0, 1]),
    "empty": [],
}

# The ufuncs with NumPy's indexed loops (the op table's `at` column), and one of each other
# class of single-output ufuncs (arity, type resolver, floating-point error class).
UFUNCS = ufuncs(lambda r: r.at) + representatives(lambda r: not r.at and r.nout == 1)
DTYPES = [NATIVE[c] for c in "?bBhHiIlLefdFD"]


def base(dtype):
    v = np.arange(1, 37) % 7
    return (v % 2).astype(bool).reshape(6, 6) if dtype.kind == "b" else v.astype(dtype).reshape(6, 6)


def _run(fn, *args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn(*args)
            exc = None
        except Exception as e:  # noqa: BLE001 - compared below
            exc = e
    return exc, sorted({str(x.message) for x in w})


@pytest.mark.parametrize("name", UFUNCS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_at_layouts_and_indices(name, dtype):
    f_np, f_npc = getattr(np, name), getattr(npc, name)
    for lname, lay in LAYOUTS.items():
        for iname, idx in INDEX.items():
            for bkind in ("scalar", "array") if f_np.nin == 2 else ("none",):
                a = base(dtype)
                b_ = npc.asarray(a.copy())
                va = lay(a)
                vb = lay(b_) if lname != "fortran" else None
                if lname == "fortran":
                    a = np.asfortranarray(a)
                    b_ = npc.asarray(a.copy())
                    b_ = npc.asarray(np.asfortranarray(np.asarray(b_)))
                    va, vb = a, b_
                ix = (np.arange(va.size).reshape(va.shape) % 3 == 1) if isinstance(idx, str) else idx
                ix_npc = npc.asarray(ix) if isinstance(ix, np.ndarray) else ix
                try:
                    sel_shape = np.shape(va[ix])
                except IndexError:
                    sel_shape = None
                args_np, args_npc = [va, ix], [vb, ix_npc]
                if bkind == "scalar":
                    args_np.append(3)
                    args_npc.append(3)
                elif bkind == "array":
                    vals = (np.arange(int(np.prod(sel_shape[-1:] if sel_shape else (1,)))) % 3 + 1).astype(dtype)
                    args_np.append(vals)
                    args_npc.append(npc.asarray(vals))
                what = f"{name}.at {dtype} {lname} idx={iname} b={bkind}"
                e_np, w_np = _run(f_np.at, *args_np)
                e_npc, w_npc = _run(f_npc.at, *args_npc)
                if e_np is not None or e_npc is not None:
                    assert e_np is not None and e_npc is not None, f"{what}: NumPy {e_np!r}, npc {e_npc!r}"
                    assert isinstance(e_npc, type(e_np)) or type(e_np).__mro__[1] in type(e_npc).__mro__, \
                        f"{what}: {e_npc!r} vs NumPy {e_np!r}"
                    continue
                assert w_npc == w_np, f"{what}: npc warned {w_npc}, NumPy {w_np}"
                assert_same(b_, a, name, ulp_bound(name, a.dtype), what)


def test_at_read_only_and_errors():
    a = npc.broadcast_to(npc.arange(3.0), (2, 3))
    with pytest.raises(ValueError):
        npc.add.at(a, [0], 1.0)
    b = npc.arange(4.0)
    with pytest.raises(IndexError):
        npc.add.at(b, [4], 1.0)
    with pytest.raises(ValueError):
        npc.add.at(b, [0], None)
    with pytest.raises(ValueError):
        npc.add.at(b, [0, 1], npc.arange(3.0))
    c = npc.asarray(np.array(5.0))
    npc.add.at(c, (), 2.0)
    e = np.array(5.0)
    np.add.at(e, (), 2.0)
    assert_same(c, e, "add", 0, "0-d target")
