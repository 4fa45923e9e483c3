"""Housekeeping of the kernel disk cache (src/fusion/jit.cpp): no temporary file survives a
failed compile, a failed install or a stopped compiler; the cache is trimmed to
npc.config.cache_size_limit, least recently used entries first (Note [cache size]); and
npc.compiler.clear_cache() empties it."""
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

import npc
from npc import _core


def unique_source(value=1):
    return f'// {uuid.uuid4().hex}\nextern "C" int npc_cache_test_fn() {{ return {value}; }}\n'


def temporaries(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith("tmp-"))


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        yield d


def fake_compiler(tmp_path, body):
    """An executable $CXX running the shell `body` (its arguments are the real compile's)."""
    p = tmp_path / f"cxx-{uuid.uuid4().hex[:8]}"
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)


# Shell lines setting $out to the -o argument of the compiler command line.
FIND_OUTPUT = 'out=""; prev=""; for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done\n'


def test_failed_compile_leaves_only_the_kept_source(cache):
    with pytest.raises(npc.CodegenError, match=r"exit code 1"):
        _core._fusion_jit("this is not C++ " + uuid.uuid4().hex)
    assert temporaries(cache) == []
    assert [p.name.startswith("failed-") for p in cache.iterdir()] == [True]


def test_compiler_failing_midway_leaves_no_temporaries(cache, tmp_path):
    # A full disk: the compiler wrote part of its output and failed.
    cxx = fake_compiler(tmp_path, FIND_OUTPUT + 'printf "\\177ELF partial" > "$out"\n'
                        'echo "No space left on device" >&2\nexit 1\n')
    with npc.config.patch(cxx=cxx):
        with pytest.raises(npc.CodegenError, match="No space left on device"):
            _core._fusion_jit(unique_source())
    assert temporaries(cache) == []


def test_stopped_compiler_leaves_no_temporaries(cache, tmp_path):
    cxx = fake_compiler(tmp_path, FIND_OUTPUT + 'printf partial > "$out"\nsleep 30\n')
    with npc.config.patch(cxx=cxx, compile_timeout=1.0):
        with pytest.raises(npc.CodegenError, match="compile_timeout"):
            _core._fusion_jit(unique_source())
    assert temporaries(cache) == []
    assert not list(cache.iterdir())


def test_failed_install_loads_the_private_copy_and_cleans_up(cache):
    src = unique_source(5)
    blocker = cache / f"{_core._fusion_cache_key(src)}.so"
    blocker.mkdir()
    (blocker / "x").write_text("a non-empty directory where the entry goes: rename() fails")
    path = _core._fusion_jit(src)
    assert temporaries(cache) == []
    assert not os.path.exists(path)  # loaded from the open file, then removed


def test_stale_temporaries_of_killed_processes_are_pruned(cache):
    stale = cache / "tmp-0123456789abcdef0123456789abcdef-1-0-0.cpp"
    fresh = cache / "tmp-0123456789abcdef0123456789abcdef-2-0-0.cpp"
    stale.write_text("left by a process killed while compiling")
    fresh.write_text("a compile running in another process")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    _core._fusion_jit(unique_source())
    assert not stale.exists() and fresh.exists()


def test_size_limit_evicts_least_recently_used_entries(cache):
    first = _core._fusion_jit(unique_source(1))
    second = _core._fusion_jit(unique_source(2))
    size = os.path.getsize(first)
    now = time.time()
    os.utime(second, (now - 200, now - 200))  # second is the least recently used
    os.utime(first, (now - 100, now - 100))
    s0 = npc._fusion.stats()
    with npc.config.patch(cache_size_limit=int(2.5 * size)):
        third = _core._fusion_jit(unique_source(3))
    assert os.path.exists(first) and os.path.exists(third) and not os.path.exists(second)
    assert npc._fusion.stats()["evictions"] == s0["evictions"] + 1


HIT = textwrap.dedent("""
    import json, sys, npc
    from npc import _core
    _core._fusion_jit(sys.argv[1])
    print(json.dumps(npc._fusion.stats()))
""")


def test_disk_hit_marks_the_entry_recently_used(cache):
    src = unique_source(4)
    path = _core._fusion_jit(src)
    old = time.time() - 1000
    os.utime(path, (old, old))
    r = subprocess.run([sys.executable, "-c", HIT, src], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NPC_CACHE_DIR=str(cache)))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["disk_hits"] == 1
    assert os.path.getmtime(path) > old + 900


def test_clear_cache(cache):
    src = unique_source(6)
    _core._fusion_jit(src)
    assert npc.compiler.clear_cache() >= 1
    assert not list(cache.iterdir())
    s0 = npc._fusion.stats()
    _core._fusion_jit(src)  # forgotten in memory too: compiled again
    assert npc._fusion.stats()["compiles"] == s0["compiles"] + 1
