"""Fuzzer finding e3f335e65a (tests/fuzz, docs/fuzzing.md).

mode: npc (`import npc as np`, npc arrays)
call: 0 (index into CALLS)
kind: warnings
NumPy warns [('ComplexWarning', 'Casting complex values to real discards the imaginary part')], npc [('ComplexWarning', 'Casting complex values to real discards the imaginary part'), ('ComplexWarning', 'Casting complex values to real discards the imaginary part')]

Program (parameters: a0), called once per input set below:

def f(a0):
    v8 = a0.astype(np.uint64)
    v8[1::2, ::2, :] = a0
    return ()
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a0):
    v8 = a0.astype(np.uint64)
    v8[1::2, ::2, :] = a0
    return ()
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([complex(1.0, 0.0), complex(1.0, 0.0), complex(1.0, 0.0), complex(1.0, 0.0)], 'complex64', (1, 4, 1), 'C')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [], 'args': [0], 'ret_prec': [], 'args_prec': [None], 'unspecified_cast': True, 'power': False}


def test_fuzz_e3f335e65a():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['npc', 'compiled-fused', 'compiled-eager'])
