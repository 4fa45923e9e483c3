"""Fuzzer finding 23c643f2a6 (tests/fuzz, docs/fuzzing.md).

mode: compiled-fused (npc.compile(f, backend='fused') on NumPy arrays)
call: 0 (index into CALLS)
kind: value
return[0]: NumPy -3.4421676e+11-3.312794e+10j, npc -3.4421667e+11-3.3127903e+10j

Program (parameters: a1), called once per input set below:

def f(a1):
    v8 = np.prod(a1, axis=(-2, -1))
    return (v8,)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzexec import arr, assert_same_as_numpy  # noqa: E402

nan, inf = float("nan"), float("inf")

SOURCE = """\
def f(a1):
    v8 = np.prod(a1, axis=(-2, -1))
    return (v8,)
"""

# One list of inputs per call of the compiled function (each made afresh for every mode).
CALLS = [
    [arr([complex(4.0, 2.0), complex(-1.0, 2.5), complex(-3.5, -4.0), complex(-3.0, 3.5), complex(1.5, -2.0), complex(1.5, 1.0), complex(-1.0, 1.5), complex(1.0, 0.0), complex(3.0, -0.5), complex(0.5, -2.0), complex(-4.0, 0.0), complex(-3.5, 2.0), complex(4.0, -1.5), complex(0.0, -0.5), complex(2.5, 1.0), complex(1.5, -3.5), complex(4.0, 0.5), complex(0.0, -1.5), complex(-4.0, 2.5), complex(2.0, 2.5), complex(-1.5, -2.5), complex(-1.0, 2.0), complex(4.0, 3.5), complex(4.0, -4.0), complex(-1.0, 3.5)], 'complex64', (5, 5), 'perm')],  # input set of the 'new size +2' call
]

# ULP budgets of the returned values and of the array arguments (0: compared exactly).
ULPS = {'ret': [4], 'args': [0], 'ret_prec': [None], 'args_prec': [None], 'unspecified_cast': False, 'power': False}


def test_fuzz_23c643f2a6():
    assert_same_as_numpy(SOURCE, CALLS, ULPS, modes=['compiled-fused'])
