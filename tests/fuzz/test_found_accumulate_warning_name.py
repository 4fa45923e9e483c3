"""Fuzzer finding 29d5bdd5dd (tests/fuzz, docs/fuzzing.md).

mode: compiled-fused (npc.compile(f, backend='fused') on NumPy arrays)
call: 0 (index into CALLS)
kind: warnings
NumPy warns [('RuntimeWarning', 'invalid value encountered in accumulate')], npc [('RuntimeWarning', 'invalid value encountered in add')]

Program (parameters: a0, a1), called once per input set below:

def f(a0, a1):
    v1 = a1 + a0
    v2 = np.cumprod(v1, axis=-3)
    v4 = np.arange(np.size(v1))
    v9 = v4[v4 > 0]
    return ()
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a0, a1):
    v1 = a1 + a0
    v2 = np.cumprod(v1, axis=-3)
    v4 = np.arange(np.size(v1))
    v9 = v4[v4 > 0]
    return ()
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([complex(inf, 1.0), complex(2.2250738585072014e-308, 1.0), complex(4.0, -1.5), complex(1.5, 3.5)], 'complex128', (4, 1, 1), 'C'), arr([complex(1.0, 0.0)], 'complex128', (), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [], 'args': [0, 0], 'ret_prec': [], 'args_prec': [None, None], 'unspecified_cast': False, 'power': False}


import pytest  # noqa: E402


def test_fuzz_29d5bdd5dd():
    # Fuzzer seed 80120: fused code named the 'invalid' of the complex cumprod after the add
    # before it (a complex product raises it from finite operands too, the add only from inf).
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['compiled-fused'])
