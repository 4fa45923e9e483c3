"""Helpers of the serialization tests (test_graph_serialization.py, test_plan_serialization.py):
running a compiled graph or plan on copies of its inputs, and comparing arrays bit for bit;
sealing an edited disk cache entry (test_lowering_cache.py, test_compile_trace_cache.py)."""
import struct
import warnings

import numpy as np

import npc


def run_on_copies(compiled, inputs, scalars):
    """`compiled(arrays, scalars)` on npc copies of `inputs`: (outputs, inputs after the run)
    as NumPy arrays, or (exception type, message) when it raises."""
    arrays = [npc.asarray(a.copy()) for a in inputs]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outs = compiled(arrays, scalars)
    except Exception as e:  # noqa: BLE001 - a copy must raise what the original raises
        return type(e), str(e)
    return [np.asarray(o) for o in outs], [np.asarray(a) for a in arrays]


def assert_bitwise_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# The trailer of a cache entry (Note [disk cache] in src/fusion/jit.cpp): magic, payload
# size, FNV-1a of the payload, hash of the key. Re-sealing an edited payload reaches the
# checks behind the trailer.
def _fnv1a(data):
    h = 1469598103934665603
    for c in data:
        h = ((h ^ c) * 1099511628211) & (2**64 - 1)
    return h


def _mix64(data):
    m = 2**64 - 1
    h = 0x9E3779B97F4A7C15 ^ len(data)
    for c in data:
        h = ((h ^ c) * 0xFF51AFD7ED558CCD) & m
        h ^= h >> 29
    return h


def seal_cache_entry(payload, name):
    """The disk cache entry of `payload` under file name stem `name` (the trailer hashes the
    name): re-sealing an edited payload reaches the checks behind the trailer."""
    return payload + b"NPCSO002" + struct.pack("<QQQ", len(payload), _fnv1a(payload), _mix64(name.encode()))
