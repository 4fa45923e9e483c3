"""Running a program of the suite three ways (NumPy, npc eager on the same source,
``npc.compile`` of the NumPy function) and validating results as NumPy benchmark suites do."""
import types

import numpy

RTOL, ATOL, REL_L2 = 1e-5, 1e-8, 1e-5


def eager_variant(fn):
    """The same function with ``np`` bound to npc: what ``import npc as np`` gives."""
    import npc
    g = dict(fn.__globals__)
    g["np"] = npc
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def as_npc(args):
    """Arguments as npc arrays (zero-copy views of NumPy's), other values unchanged."""
    import npc
    return tuple(npc.asarray(a) if isinstance(a, numpy.ndarray) else a for a in args)


def copy_args(args):
    return tuple(a.copy() if isinstance(a, numpy.ndarray) else a for a in args)


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _leaves(item)]
    return [x]


def mismatch(ref, got):
    """None when `got` validates against NumPy's `ref` (allclose(rtol=1e-5, atol=1e-8), else a
    relative L2 error below 1e-5, and the same dtype and shape); otherwise the reason."""
    rl, gl = _leaves(ref), _leaves(got)
    if len(rl) != len(gl):
        return f"{len(gl)} results, NumPy {len(rl)}"
    for i, (r, g) in enumerate(zip(rl, gl)):
        r, g = numpy.asarray(r), numpy.asarray(g)
        if r.shape != g.shape or r.dtype != g.dtype:
            return f"result {i}: {g.dtype}{g.shape}, NumPy {r.dtype}{r.shape}"
        if r.dtype.kind in "biu":
            if not numpy.array_equal(r, g):
                return f"result {i}: integer values differ"
            continue
        if numpy.allclose(g, r, rtol=RTOL, atol=ATOL, equal_nan=True):
            continue
        diff = numpy.linalg.norm((g - r).ravel())
        norm = numpy.linalg.norm(r.ravel())
        if norm > 0 and diff / norm < REL_L2:
            continue
        return f"result {i}: relative L2 error {diff / norm if norm else diff:.3g}"
    return None
