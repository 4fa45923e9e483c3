"""The operand tables of _ufunc_helpers.py (REAL_RANGE, IMAG_RANGE, POSITIVE_BASE,
INT_OPERAND) are keyed by the op table's rows: every key is a ufunc row, and every ufunc
row's test values are in its domain, so NumPy computes it on them (each of its float64,
complex128 and int64 loops) without a floating-point error or an exception. A row added
without the entry its domain needs (a logarithm, an inverse cosine, an integer divisor)
fails here."""
import numpy as np
import pytest

from _ufunc_helpers import (IMAG_RANGE, INT_OPERAND, NATIVE, POSITIVE_BASE, REAL_RANGE, UFUNC_ROWS,
                            values)

BY_NAME = {r.name: r for r in UFUNC_ROWS}


def test_every_key_is_a_row():
    for op in set(REAL_RANGE) | set(IMAG_RANGE) | POSITIVE_BASE:
        assert op in BY_NAME, op
    for op, role in INT_OPERAND:
        assert op in BY_NAME and role < BY_NAME[op].nin, (op, role)
    for op in IMAG_RANGE:
        assert any(NATIVE[sig[0]].kind == "c" for sig in BY_NAME[op].loops.split()), op


@pytest.mark.parametrize("row", UFUNC_ROWS, ids=lambda r: r.name)
def test_values_are_in_the_domain(row):
    uf = getattr(np, row.name)
    sigs = [sig.split("->")[0] for sig in row.loops.split()]
    sigs = [ins for ins in sigs if ins[0] in "dDl"]
    if not sigs:
        pytest.skip("no float64, complex128 or int64 loop")
    for ins in sigs:
        args = [values(NATIVE[c], row.name, 257, seed=1, role=i) for i, c in enumerate(ins)]
        with np.errstate(all="raise"):  # a value outside the domain raises FloatingPointError
            res = uf(*args)
        for r in res if isinstance(res, tuple) else (res,):
            assert np.all(np.isfinite(r)), (row.name, ins)
