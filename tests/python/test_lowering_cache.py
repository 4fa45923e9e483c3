"""The lowered-program cache (Note [lowered-program cache] in src/fusion/lower_cache.cpp).

Each check runs the same programs in fresh processes over one cache directory: the first
lowers and stores, the next reads every lowering back (lowers nothing) and must give the
same bytes, also for refused entries (truncated, corrupted, another key), which are lowered
again."""
import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from _serialization import seal_cache_entry as _seal

RUN = textwrap.dedent("""
    import hashlib, json, numpy as np, npc
    npc.config.codegen_errors = "raise"

    def elementwise(a, b):
        return np.sqrt(a * a + b * b) - 1.25 * a

    def epilogue(X, W, b):
        return np.maximum(X @ W + b, 0)  # a library call and its in-place epilogue

    def stencil(u):
        for _ in range(6):
            u[1:-1] = 0.5 * (u[:-2] + u[2:])
        return u

    def reductions(A):
        return A.sum(axis=0), A.max(axis=1), np.cumsum(A, axis=1)

    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(1001), rng.standard_normal(1001)
    X, W, bias = rng.standard_normal((40, 30)), rng.standard_normal((30, 20)), rng.standard_normal(20)
    u = rng.standard_normal(300)
    A = rng.standard_normal((37, 53))
    cases = [
        ("elementwise", elementwise, (a, b)),
        ("strided", elementwise, (a[:-1:2], b[1::2])),  # a non-contiguous variant
        ("epilogue", epilogue, (X, W, bias)),
        ("stencil", stencil, (u,)),
        ("reductions", reductions, (A,)),
    ]
    out = {"digests": {}, "same_as_numpy": {}}
    for name, fn, args in cases:
        want = fn(*[np.array(x, copy=True) for x in args])
        got = npc.compile(fn, backend="fused")(*[np.array(x, copy=True) for x in args])
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        got = [np.asarray(g) for g in got]
        out["digests"][name] = [hashlib.sha256(g.tobytes()).hexdigest() + str(g.dtype) + str(g.shape) for g in got]
        out["same_as_numpy"][name] = all(
            g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == np.asarray(w).tobytes()
            for g, w in zip(got, want))
    out["stats"] = npc._fusion.stats()
    print(json.dumps(out))
""")


def run_child(cache, **env):
    e = {k: v for k, v in os.environ.items() if k != "NPC_LOWERING_CACHE"}
    e.update(NPC_CACHE_DIR=str(cache), **env)
    r = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=e, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache directory filled by one process, and what that process computed."""
    cache = tmp_path_factory.mktemp("lowcache")
    first = run_child(cache)
    return cache, first


def entries(cache):
    return sorted(p for p in cache.iterdir() if p.suffix == ".low")


def test_first_process_lowers_and_stores(filled):
    cache, first = filled
    s = first["stats"]
    assert all(first["same_as_numpy"].values()), first["same_as_numpy"]
    assert s["lowering_cache_hits"] == 0
    assert s["graphs"] >= 5 and s["lowering_cache_stores"] == s["graphs"]
    assert len(entries(cache)) == s["graphs"]
    for p in entries(cache):
        assert p.stat().st_mode & 0o777 == 0o600


def test_second_process_lowers_nothing(filled):
    cache, first = filled
    second = run_child(cache)
    s = second["stats"]
    assert s["graphs"] == first["stats"]["graphs"]
    assert s["lowering_cache_hits"] == s["graphs"]  # every graph read back: none lowered
    assert s["lowering_cache_stores"] == 0 and s["compiles"] == 0 and s["corrupt_entries"] == 0
    assert s["kernels"] == first["stats"]["kernels"]
    assert second["digests"] == first["digests"]
    assert all(second["same_as_numpy"].values())


def test_switched_off(filled):
    cache, first = filled
    off = run_child(cache, NPC_LOWERING_CACHE="0")
    s = off["stats"]
    assert s["lowering_cache_hits"] == 0 and s["lowering_cache_stores"] == 0
    assert off["digests"] == first["digests"]


def _split(entry):
    """(payload, key) of an entry: the payload starts with magic, version and the key."""
    payload = entry[:-32]
    assert payload[:8] == b"NPCLOW01"
    (n,) = struct.unpack_from("<I", payload, 12)
    return payload, payload[16:16 + n]


def _copy_cache(src, dst):
    dst.mkdir(mode=0o700)
    for p in src.iterdir():
        if p.name.startswith("tmp-"):
            continue
        (dst / p.name).write_bytes(p.read_bytes())
        os.chmod(dst / p.name, 0o600)
    return dst


def _edit(path, fn):
    data = path.read_bytes()
    path.write_bytes(fn(data, path.stem))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other_key", "bad_node_count", "trailing_byte",
                                    "bad_buffer_index"])
def test_refused_entries_are_lowered_again(filled, tmp_path, damage):
    cache, first = filled
    cache = _copy_cache(cache, tmp_path / "c")
    low = entries(cache)
    assert low

    def edit(data, name):
        payload, key = _split(data)
        if damage == "truncated":
            return data[: len(data) // 2]
        if damage == "flipped":
            i = len(payload) - 40
            return data[:i] + bytes([data[i] ^ 0x55]) + data[i + 1:]
        if damage == "other_key":
            # Another build's entry under this name: the stored key differs (a digit of the
            # build id, after the version line), the trailer is this key's.
            i = 16 + key.index(b"\n", key.index(b"\n") + 1) + 2
            return _seal(payload[:i] + bytes([payload[i] ^ 1]) + payload[i + 1:], name)
        pos = 16 + len(key)
        if damage == "bad_node_count":
            (n,) = struct.unpack_from("<I", payload, pos)
            return _seal(payload[:pos] + struct.pack("<I", n + 1) + payload[pos + 4:], name)
        if damage == "trailing_byte":
            return _seal(payload + b"\0", name)
        if damage == "bad_buffer_index":
            # The in-place list closes the payload: its last entry becomes a buffer far out of range.
            return _seal(payload[:-4] + struct.pack("<i", 1 << 30), name)
        raise AssertionError(damage)

    for p in low:
        _edit(p, edit)
    again = run_child(cache)
    s = again["stats"]
    assert s["lowering_cache_hits"] == 0
    assert s["corrupt_entries"] == len(low)
    assert s["lowering_cache_stores"] == s["graphs"]  # lowered and stored again
    assert again["digests"] == first["digests"]
    assert all(again["same_as_numpy"].values())
    # The rewritten entries are good again.
    third = run_child(cache)
    assert third["stats"]["lowering_cache_hits"] == third["stats"]["graphs"]
    assert third["digests"] == first["digests"]


def test_entries_trimmed_and_cleared_with_kernels(filled, tmp_path):
    cache, first = filled
    cache = _copy_cache(cache, tmp_path / "c")
    assert entries(cache)
    env = dict(os.environ, NPC_CACHE_DIR=str(cache))
    code = "import npc; print(npc._fusion.clear_cache())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not entries(cache) and not list(cache.glob("*.so"))


def test_symlinked_entry_refused(filled, tmp_path):
    cache, first = filled
    cache = _copy_cache(cache, tmp_path / "c")
    for p in entries(cache):
        target = tmp_path / (p.name + ".real")
        target.write_bytes(p.read_bytes())
        p.unlink()
        p.symlink_to(target)
    again = run_child(cache)
    s = again["stats"]
    assert s["lowering_cache_hits"] == 0 and s["corrupt_entries"] >= 1
    assert again["digests"] == first["digests"]
