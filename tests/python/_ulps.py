"""ULP bounds of native npc kernels against NumPy, read from the project's data file
(tests/numpy_conformance/ulp_tolerances.csv, owned by the ufunc layer). An op that is not
listed, or that runs on the NumPy fallback, is compared exactly."""
import csv
import pathlib

import numpy

import npc
from npc import _fallback

_CSV = pathlib.Path(__file__).parents[1] / "numpy_conformance" / "ulp_tolerances.csv"


def _load():
    if not _CSV.exists():
        return {}
    rows = [line for line in _CSV.read_text().splitlines() if line and not line.startswith("#")]
    return {(r["op"], r["kind"]): int(r["ulp"]) for r in csv.DictReader(rows)}


_BOUNDS = _load()


def ulp_bound(name, dtype):
    """Max ULPs between npc's `name` (array API or NumPy name) and NumPy's for `dtype`."""
    uf = getattr(numpy, name, None)
    if isinstance(uf, numpy.ufunc):
        name = uf.__name__  # NumPy's own name of an Array API spelling (acos: arccos)
    impl = getattr(npc, name, None)
    if impl is None or _fallback.is_fallback(impl):
        return 0
    return _BOUNDS.get((name, numpy.dtype(dtype).kind), 0)


def assert_close(name, expected, got):
    """Exact equality (values, dtype, shape), or within the declared ULP bound of `name`."""
    a, b = numpy.asarray(expected), numpy.asarray(got)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    bound = ulp_bound(name, a.dtype) if a.dtype.kind in "fc" else 0
    if bound == 0:
        assert numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), (a, b)
        return
    finite = numpy.isfinite(a)
    assert numpy.array_equal(finite, numpy.isfinite(b)) and numpy.array_equal(a[~finite], b[~finite], equal_nan=True)
    if a.dtype.kind == "c":  # per component
        a, b = numpy.stack([a.real, a.imag]), numpy.stack([b.real, b.imag])
        finite = numpy.isfinite(a)
    numpy.testing.assert_array_max_ulp(a[finite], b[finite], maxulp=bound)
