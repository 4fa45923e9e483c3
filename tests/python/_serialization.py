"""Helpers of the serialization tests (test_graph_serialization.py, test_plan_serialization.py):
running a compiled graph or plan on copies of its inputs, and comparing arrays bit for bit;
sealing an edited disk cache entry (test_lowering_cache.py, test_compile_trace_cache.py);
the directories of a user's module run in fresh processes (test_compile_trace_cache.py,
test_compile_mode_cache.py)."""
import os
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


_M64 = 2**64 - 1
_P1, _P2, _P3, _P4 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix(h):
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _M64
    return h ^ (h >> 33)


def hash128(data, seed=0):
    """npc's hash of bytes (Note [hashing bytes] in src/core/hash.hpp), written again here so
    that tests can seal bytes they edited: (lo, hi); lo is the 64-bit checksum."""
    data = bytes(data)
    v = [(seed + _P1) & _M64, seed ^ _P2, (seed + _P3) & _M64, seed ^ _P4]
    n = len(data)
    padded = data + b"\0" * (-n % 32)
    for i in range(0, len(padded), 32):
        for k, w in enumerate(struct.unpack_from("<4Q", padded, i)):
            v[k] = (_rotl((v[k] + w * _P2) & _M64, 31) * _P1) & _M64
    length = (n * _P3) & _M64
    lo = (v[0] + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
    hi = ((v[0] ^ _rotl(v[1], 23)) + (v[2] ^ _rotl(v[3], 41))) & _M64
    return _fmix(lo ^ length), _fmix((hi + length + _P4) & _M64)


def hash64(data, seed=0):
    return hash128(data, seed)[0]


def reseal(b):
    """Graph or plan bytes with their trailer recomputed (the checksum of every byte before
    it): mutated bytes then reach the checks behind the checksum."""
    return bytes(b[:-8]) + hash64(b[:-8]).to_bytes(8, "little")


# The trailer of a cache entry (Note [disk cache] in src/fusion/jit.cpp): magic, payload
# size, hash64 of the payload, hash64 (seed 1) of the key. Re-sealing an edited payload
# reaches the checks behind the trailer.
def seal_cache_entry(payload, name):
    """The disk cache entry of `payload` under file name stem `name` (the trailer hashes the
    name): re-sealing an edited payload reaches the checks behind the trailer."""
    return payload + b"NPCSO003" + struct.pack("<QQQ", len(payload), hash64(payload), hash64(name.encode(), 1))


def user_dirs(tmp_path, kernel_cache, user_module, driver):
    """A user's module (mod/usermod.py), its driver script and a private cache directory that
    holds, as hard links, the kernels and lowered programs compiled by earlier tests (compiled
    once; what else a test keeps is its own): (mod, driver, cache)."""
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "usermod.py").write_text(user_module)
    (tmp_path / "driver.py").write_text(driver)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for f in kernel_cache.iterdir():
        if f.suffix in (".so", ".low"):
            os.link(f, cache / f.name)
    return mod, tmp_path / "driver.py", cache


def share_kernels(cache, kernel_cache):
    """Links the kernels and lowered programs a run added to `cache` into `kernel_cache`."""
    for f in cache.iterdir():
        if f.suffix in (".so", ".low") and not (kernel_cache / f.name).exists():
            os.link(f, kernel_cache / f.name)
