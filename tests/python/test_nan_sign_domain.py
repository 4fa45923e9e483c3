"""The sign of the NaN that a float function makes from an out-of-domain number (log of a
negative, arccos of 2, sqrt of -1, log of -inf, ...), eager and compiled (both backends),
through contiguous, strided and reversed operands (Note [NaN sign of log] in
include/npc/scalar_rules.hpp).

NumPy's sign there is what its loops give on the CPU: its SIMD routine for some operands and
CPUs, the C library's scalar function for others. Where NumPy's own sign changes with the
SIMD paths it may take (checked by running NumPy again with NPY_DISABLE_CPU_FEATURES, as
`make test-simd-variants` does), nothing is asserted; everywhere else npc gives NumPy's sign.
The functions come from the op table (every one-input float ufunc row).
"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npc
from npc import _core

OPS = [r.name for r in _core.op_table()
       if r.kind == 0 and r.nin == 1 and r.nout == 1 and hasattr(np, r.name)
       and any(s.startswith(("e->e", "f->f", "d->d")) for s in r.loops.split())]
PROBES = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -np.inf, np.inf, -1e300, 1e300]
DTYPES = ["float16", "float32", "float64"]
LAYOUTS = {
    "contiguous": lambda a: a,
    "strided": lambda a: a[::2],
    "reversed": lambda a: a[::-1],
    "reversed_strided": lambda a: a[::-3],
}
VARIANT = "X86_V4 AVX512_ICL AVX512_SPR"  # NumPy held to its AVX2 paths (any x86-64 CPU)


def probe_array(dtype):
    with np.errstate(over="ignore"):
        return np.repeat(np.array(PROBES), 7).astype(dtype)  # each probe on several lanes


def nan_signs(results):
    """{key: signbits of the NaNs made from numbers} of {key: (input, result)}."""
    out = {}
    for key, (x, r) in results.items():
        r = np.asarray(r)
        made = np.isnan(r) & ~np.isnan(x)
        out[key] = np.signbit(r[made]).astype(int).tolist()
    return out


def numpy_signs():
    res = {}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dt in DTYPES:
            x = probe_array(dt)
            for op in OPS:
                for lay, view in LAYOUTS.items():
                    res[f"{dt} {op} {lay}"] = (view(x), getattr(np, op)(view(x)))
    return nan_signs(res)


_CHILD = f"""
import json, sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import test_nan_sign_domain as t
print(json.dumps(t.numpy_signs()))
"""


@pytest.fixture(scope="module")
def stable_numpy_signs():
    """NumPy's NaN signs here, for the cases where NumPy held to other SIMD paths agrees."""
    here = numpy_signs()
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=VARIANT)
    child = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    other = json.loads(child.stdout.strip().splitlines()[-1])
    return {k: v for k, v in here.items() if other.get(k) == v}


def test_the_reproducer_is_stable_and_checked(stable_numpy_signs):
    """np.log of a negative through a reversed view: +NaN in NumPy on every SIMD path."""
    assert stable_numpy_signs["float64 log reversed"] and not any(stable_numpy_signs["float64 log reversed"])
    assert "float64 log2 reversed" in stable_numpy_signs
    x = np.array([-3.0, -1.0, 2.0])
    with np.errstate(invalid="ignore"):
        assert not np.signbit(np.log(x[::-1])[1:]).any()
        assert not np.signbit(np.asarray(npc.log(npc.asarray(x)[::-1]))[1:]).any()
        assert not np.signbit(npc.compile(lambda a: np.log(a[::-1]), backend="fused")(x)[1:]).any()


@pytest.mark.parametrize("mode", ["eager", "fused", "compiled_eager"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_signs_as_numpy(dtype, mode, stable_numpy_signs, tmp_path):
    x = probe_array(dtype)
    res = {}
    with np.errstate(all="ignore"), warnings.catch_warnings(), npc.config.patch(cache_dir=str(tmp_path)):
        warnings.simplefilter("ignore")
        for op in OPS:
            for lay, view in LAYOUTS.items():
                key = f"{dtype} {op} {lay}"
                if key not in stable_numpy_signs:
                    continue
                fn = lambda a, op=op, view=view: getattr(np, op)(view(a))  # noqa: E731
                if mode == "eager":
                    r = fn(npc.asarray(x))
                else:
                    r = npc.compile(fn, backend="eager" if mode == "compiled_eager" else "fused")(x)
                res[key] = (view(x), r)
    got = nan_signs(res)
    bad = {k: (got[k], stable_numpy_signs[k]) for k in got if got[k] != stable_numpy_signs[k]}
    assert not bad, bad
