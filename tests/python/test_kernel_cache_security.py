"""The kernel disk cache as a trust boundary (src/fusion/jit.cpp, Note [cache trust]).

Loading a cache entry runs its code in this process, so npc must never load an entry that
another user could have written or swapped: the directory must be private, an entry must be
a regular file of this user bound to its key, and the file checked must be the file loaded.
The "attacker" plants a shared object whose constructor creates a marker file: if npc
loads it, the marker appears. Where the machine allows (running as root) the attacker is a
second user (uid 65534, through setpriv); otherwise files of another uid cannot be made and
those cases are skipped.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid

import pytest

import npc
from npc import _core

from _serialization import seal_cache_entry  # noqa: E402

OTHER_UID = 65534
IS_ROOT = os.geteuid() == 0
HAVE_SETPRIV = shutil.which("setpriv") is not None
needs_other_user = pytest.mark.skipif(not (IS_ROOT and HAVE_SETPRIV),
                                      reason="needs root and setpriv to act as a second user")


def trailer(payload, key):
    """The trailer npc appends to an entry (Note [disk cache]): anyone can compute it, so
    each planted entry below would be accepted without the other checks."""
    return seal_cache_entry(payload, key)[len(payload):]


def unique_source(value=1):
    """A translation unit no other test compiles (so its key is new to this process)."""
    return f'// {uuid.uuid4().hex}\nextern "C" int npc_cache_test_fn() {{ return {value}; }}\n'


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        yield d


@pytest.fixture(scope="module")
def payload(tmp_path_factory):
    """A shared object whose constructor creates the file named by $NPC_TEST_MARKER."""
    d = tmp_path_factory.mktemp("payload")
    src = d / "evil.c"
    src.write_text(textwrap.dedent("""
        #include <fcntl.h>
        #include <stdlib.h>
        #include <unistd.h>
        __attribute__((constructor)) static void planted(void) {
          const char* m = getenv("NPC_TEST_MARKER");
          if (m) close(open(m, O_CREAT | O_WRONLY, 0644));
        }
        int npc_cache_test_fn(void) { return 666; }
    """))
    so = d / "evil.so"
    subprocess.run([os.environ.get("CC") or "cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so.read_bytes()


@pytest.fixture
def marker(tmp_path, monkeypatch):
    m = tmp_path / "planted-code-ran"
    monkeypatch.setenv("NPC_TEST_MARKER", str(m))
    return m


@pytest.fixture
def shared_tmp():
    """A directory outside pytest's private tree (0700), so the second user can reach it."""
    d = tempfile.mkdtemp(prefix="npc-two-users-")
    os.chmod(d, 0o755)
    yield __import__("pathlib").Path(d)
    shutil.rmtree(d, ignore_errors=True)


def plant(path, payload, key, uid=None):
    """Writes a planted entry for `key` at `path` (owned by `uid` when given)."""
    path.write_bytes(payload + trailer(payload, key))
    if uid is not None:
        os.chown(path, uid, uid)


def as_other_user(*cmd):
    return subprocess.run(["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", *cmd],
                           check=True, capture_output=True, timeout=30)


def jit_in_thread(src, timeout=20):
    """_fusion_jit(src) on a thread; fails the test instead of hanging it."""
    out = {}

    def run():
        try:
            out["path"] = _core._fusion_jit(src)
        except BaseException as e:  # noqa: BLE001 - reported below
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t0 = time.monotonic()
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "jit blocked"
    if "error" in out:
        raise out["error"]
    return out["path"], time.monotonic() - t0


def test_entry_of_another_kernel_renamed_to_this_key_is_rejected(cache):
    src_a, src_b = unique_source(1), unique_source(2)
    path_a = _core._fusion_jit(src_a)
    key_b = _core._fusion_cache_key(src_b)
    shutil.copyfile(path_a, cache / f"{key_b}.so")  # a valid entry, of another key
    s0 = npc._fusion.stats()
    path_b = _core._fusion_jit(src_b)
    s1 = npc._fusion.stats()
    assert s1["corrupt_entries"] == s0["corrupt_entries"] + 1
    assert s1["compiles"] == s0["compiles"] + 1 and s1["disk_hits"] == s0["disk_hits"]
    import ctypes
    assert ctypes.CDLL(path_b).npc_cache_test_fn() == 2


def test_renamed_entry_under_npc_compile_gives_numpy_results(tmp_path):
    # End to end: two compiled functions of the same structure (same kernel symbol names),
    # the entry of one renamed to the other's key, loaded by a fresh process.
    script = textwrap.dedent("""
        import json, os, sys, numpy as np, npc
        npc.config.codegen_errors = "raise"
        x = np.linspace(0.1, 3.0, 64)
        outs = {}
        for name, d in (("sin", sys.argv[1]), ("cos", sys.argv[2])):
            if not d:
                continue
            npc.config.cache_dir = d
            f = npc.compile(lambda x: getattr(np, name)(x) * 2.0, backend="fused")
            outs[name] = bool(np.array_equal(f(x), getattr(np, name)(x) * 2.0))
        print(json.dumps(dict(outs, **npc._fusion.stats())))
    """)
    d1, d2 = tmp_path / "d1", tmp_path / "d2"
    d1.mkdir(mode=0o700)
    d2.mkdir(mode=0o700)

    def child(a, b):
        r = subprocess.run([sys.executable, "-c", script, a, b], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    assert child(str(d1), str(d2))["compiles"] == 2
    (sin_entry,), (cos_entry,) = list(d1.glob("*.so")), list(d2.glob("*.so"))
    shutil.copyfile(sin_entry, cos_entry)
    out = child("", str(d2))
    assert out["cos"] and out["corrupt_entries"] == 1 and out["compiles"] == 1


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_group_or_world_writable_directory_is_refused(tmp_path, payload, marker, capfd, mode):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, mode)
    src = unique_source(3)
    plant(d / f"{_core._fusion_cache_key(src)}.so", payload, _core._fusion_cache_key(src))
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        path = _core._fusion_jit(src)
    assert not marker.exists()
    assert not path.startswith(str(d))
    assert "writable by group or others" in capfd.readouterr().err
    assert [p.name for p in d.iterdir()] == [f"{_core._fusion_cache_key(src)}.so"]  # nothing written there


@needs_other_user
def test_entry_planted_by_another_user_in_a_world_writable_directory(shared_tmp, payload, marker):
    # The attacker (another uid) writes into a sticky world-writable cache directory.
    d = shared_tmp / "sticky"
    d.mkdir()
    os.chmod(d, 0o1777)
    src = unique_source(4)
    key = _core._fusion_cache_key(src)
    evil = shared_tmp / "evil.bin"
    evil.write_bytes(payload + trailer(payload, key))
    os.chmod(evil, 0o644)
    as_other_user("cp", str(evil), str(d / f"{key}.so"))
    assert (d / f"{key}.so").stat().st_uid == OTHER_UID
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        _core._fusion_jit(src)
    assert not marker.exists()


@needs_other_user
def test_directory_created_first_by_another_user_is_refused(shared_tmp, payload, marker, capfd):
    # The predictable-path attack: another user creates the cache directory (0755, theirs)
    # with a planted entry before the victim's first run.
    os.chmod(shared_tmp, 0o1777)
    d = shared_tmp / "npc-cache-0"
    src = unique_source(5)
    key = _core._fusion_cache_key(src)
    evil = shared_tmp / "evil.bin"
    evil.write_bytes(payload + trailer(payload, key))
    os.chmod(evil, 0o644)
    as_other_user("sh", "-c", f"mkdir -m 755 {d} && cp {evil} {d}/{key}.so")
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        _core._fusion_jit(src)
    assert not marker.exists()
    assert f"owned by another user (uid {OTHER_UID})" in capfd.readouterr().err


@pytest.mark.skipif(not IS_ROOT, reason="needs root to make a file of another uid")
def test_entry_of_another_owner_in_a_private_directory_is_refused(cache, payload, marker):
    src = unique_source(6)
    key = _core._fusion_cache_key(src)
    plant(cache / f"{key}.so", payload, key, uid=OTHER_UID)
    s0 = npc._fusion.stats()
    _core._fusion_jit(src)
    assert not marker.exists()
    assert npc._fusion.stats()["corrupt_entries"] == s0["corrupt_entries"] + 1
    assert (cache / f"{key}.so").stat().st_uid == os.geteuid()  # replaced by this user's build


def test_group_writable_entry_and_symlinked_entry_are_refused(cache, tmp_path, payload, marker):
    src1, src2 = unique_source(7), unique_source(8)
    k1, k2 = _core._fusion_cache_key(src1), _core._fusion_cache_key(src2)
    plant(cache / f"{k1}.so", payload, k1)
    os.chmod(cache / f"{k1}.so", 0o666)
    elsewhere = tmp_path / "elsewhere.so"
    plant(elsewhere, payload, k2)
    os.symlink(elsewhere, cache / f"{k2}.so")
    _core._fusion_jit(src1)
    _core._fusion_jit(src2)
    assert not marker.exists()


def test_symlinked_cache_directory_is_refused(tmp_path, payload, marker, capfd):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    os.symlink(real, link)
    src = unique_source(9)
    plant(real / f"{_core._fusion_cache_key(src)}.so", payload, _core._fusion_cache_key(src))
    with npc.config.patch(cache_dir=str(link), codegen_errors="raise"):
        _core._fusion_jit(src)
    assert not marker.exists()
    assert "is a symbolic link" in capfd.readouterr().err


def test_fifo_at_an_entry_path_does_not_block(cache):
    src = unique_source(10)
    os.mkfifo(cache / f"{_core._fusion_cache_key(src)}.so")
    s0 = npc._fusion.stats()
    path, secs = jit_in_thread(src)
    assert secs < 15
    assert npc._fusion.stats()["corrupt_entries"] == s0["corrupt_entries"] + 1
    assert stat.S_ISREG(os.lstat(path).st_mode)


def test_symlink_to_dev_zero_is_not_read(cache):
    src = unique_source(11)
    os.symlink("/dev/zero", cache / f"{_core._fusion_cache_key(src)}.so")
    path, secs = jit_in_thread(src)
    assert secs < 15
    assert stat.S_ISREG(os.lstat(path).st_mode)


def test_cache_directory_and_files_are_private(tmp_path):
    d = tmp_path / "a" / "b" / "npc"
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        _core._fusion_jit(unique_source(12))
    for p in (tmp_path / "a", tmp_path / "a" / "b", d):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    (entry,) = d.iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


READONLY_CHILD = textwrap.dedent("""
    import json, sys, numpy as np, npc
    from npc import _core
    npc.config.codegen_errors = "raise"
    _core._fusion_jit(sys.argv[1])
    print(json.dumps(npc._fusion.stats()))
""")


def test_read_only_prebuilt_cache_is_used(tmp_path):
    # A cache baked into an image: trusted (root's or the user's), not writable by the user.
    base = tempfile.mkdtemp(prefix="npc-ro-")
    try:
        os.chmod(base, 0o755)
        d = os.path.join(base, "cache")
        os.mkdir(d, 0o700)
        src = unique_source(13)
        with npc.config.patch(cache_dir=d, codegen_errors="raise"):
            _core._fusion_jit(src)
        for name in os.listdir(d):
            os.chmod(os.path.join(d, name), 0o644)
        os.chmod(d, 0o555)
        env = dict(os.environ, NPC_CACHE_DIR=d)
        cmd = [sys.executable, "-c", READONLY_CHILD, src]
        if IS_ROOT:
            if not HAVE_SETPRIV:
                pytest.skip("root cannot be denied writes without setpriv")
            # Another user that may read everything (the Python of this test may live in a
            # private home) but write only what others may write.
            cmd = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups",
                   "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"] + cmd
            env["HOME"] = base
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=base)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out["disk_hits"] == 1 and out["compiles"] == 0, r.stderr
        assert sorted(os.listdir(d)) == [f"{_core._fusion_cache_key(src)}.so"]
        # A miss compiles into a private directory, logged once.
        r = subprocess.run(cmd[:-1] + [unique_source(14)], capture_output=True, text=True, env=env,
                           timeout=120, cwd=base)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.strip().splitlines()[-1])["compiles"] == 1
        assert r.stderr.count("is read-only") == 1
    finally:
        os.chmod(os.path.join(base, "cache"), 0o700)
        shutil.rmtree(base)


def test_oversized_entry_is_not_read(cache):
    # A 1 GiB sparse file at the entry path: refused by its size before any byte is read.
    src = unique_source(15)
    with open(cache / f"{_core._fusion_cache_key(src)}.so", "wb") as f:
        f.truncate(1 << 30)
    s0 = npc._fusion.stats()
    path, secs = jit_in_thread(src)
    assert secs < 15 and os.path.getsize(path) < 1 << 20
    assert npc._fusion.stats()["corrupt_entries"] == s0["corrupt_entries"] + 1
