"""Eager decisions kept across processes (config.mode_cache, Note [modes kept across
processes] in python/npc/compiler/_persist.py): once a process measured that a function with
graph breaks runs faster eagerly (Note [slow graph breaks]), a later process's first call with
the same guard key runs eagerly without tracing, with NumPy's results; a changed function,
other arguments or a damaged entry are decided anew."""
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import npc

from _serialization import seal_cache_entry, share_kernels, user_dirs

USER_MODULE = '''
import os
import numpy as np

N = int(os.environ.get("UM_N", "400"))


def pick(x):
    # A break per element (a Python `if` on an array element): tracing a call costs far
    # more than running it.
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            total += 1.0
        else:
            total -= 0.5
    return x * total


def scaled(x, s):
    # `if s > 0` makes the float s static on the first trace: the guard key of later calls
    # holds its value, the key of the first call did not.
    if s > 0:
        x = x * s
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            total += 1.0
    return x + total


def args_of(name):
    x = np.random.default_rng(3).random(N)
    return {"pick": (x,), "scaled": (x, 0.75)}[name]
'''

DRIVER = '''
import pickle, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import npc
import usermod
name, calls = sys.argv[2], int(sys.argv[3])
fn = getattr(usermod, name)
cf = npc.compile(fn)
out = {"calls": []}
for _ in range(calls):
    before = npc.compiler.stats()
    got = cf(*usermod.args_of(name))
    after = npc.compiler.stats()
    want = fn(*usermod.args_of(name))
    out["calls"].append({"traces": after["traces"] - before["traces"],
                         "eager_runs": after["eager_runs"] - before["eager_runs"],
                         "same": type(got) is type(want) and np.asarray(got).dtype == want.dtype
                         and np.array_equal(np.asarray(got), want)})
with open(sys.argv[4], "wb") as f:
    pickle.dump(out, f)
'''

DECIDING_CALLS = 12  # enough timed calls for Note [slow graph breaks] to decide a clear gap


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    d = tmp_path_factory.mktemp("mode-cache-kernels")
    d.chmod(0o700)
    return d


@pytest.fixture
def user(tmp_path, kernel_cache):
    """A user's module and a runner of fresh processes that call one of its functions."""
    mod, driver, cache = user_dirs(tmp_path, kernel_cache, USER_MODULE, DRIVER)

    def run(name="pick", calls=1, eager_if_faster=True, **env):
        out = tmp_path / "out.pkl"
        e = dict(os.environ, NPC_CACHE_DIR=str(cache), NPC_EAGER_IF_FASTER="1" if eager_if_faster else "0", **env)
        subprocess.run([sys.executable, str(driver), str(mod), name, str(calls), str(out)],
                       env=e, check=True, timeout=600)
        share_kernels(cache, kernel_cache)
        with open(out, "rb") as f:
            r = pickle.load(f)["calls"]
        assert all(c["same"] for c in r), r  # NumPy's results, in every mode
        return r

    run.cache = cache
    run.module = mod / "usermod.py"
    return run


def _modes(cache):
    return sorted(p for p in cache.iterdir() if p.suffix == ".mode")


def _traces(calls):
    return sum(c["traces"] for c in calls)


def _decide(user, name="pick", **env):
    """Runs a process that decides an eager mode; returns the entry it kept."""
    first = user(name, DECIDING_CALLS, **env)
    assert first[-1]["eager_runs"] == 1 and first[-1]["traces"] == 0, first  # decided: eager
    (path,) = _modes(user.cache)
    return path


def test_a_later_process_runs_the_kept_mode_at_once(user):
    _decide(user)
    again = user("pick", 3)
    assert _traces(again) == 0, again
    assert all(c["eager_runs"] == 1 for c in again), again
    assert len(_modes(user.cache)) == 1  # nothing decided (or written) anew


def test_a_changed_function_is_decided_anew(user):
    _decide(user)
    src = user.module.read_text().replace("total -= 0.5", "total -= 0.25")
    user.module.write_text(src)
    again = user("pick", 1)
    assert again[0]["traces"] == 1, again


def test_other_argument_shapes_are_decided_anew(user):
    _decide(user)
    again = user("pick", 1, UM_N="300")
    assert again[0]["traces"] == 1, again
    assert user("pick", 1)[0]["traces"] == 0  # the first shape's decision still holds


def test_a_key_the_first_trace_changes_traces_once(user):
    # The first call's key (s a runtime float) is not the key decided (s static): a later
    # process traces the first call, then finds the decision as the key's timed calls start.
    _decide(user, "scaled")
    again = user("scaled", 4)
    assert [c["traces"] for c in again] == [1, 0, 0, 0], again
    assert all(c["eager_runs"] == 1 for c in again[1:]), again


def _reseal(path, body):
    path.write_bytes(seal_cache_entry(body, path.stem))


def _damage(kind, path):
    data = path.read_bytes()
    body = data[:-32]
    magic, fmt = body[:8], body[8:12]
    if kind == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0x10
        path.write_bytes(bytes(b))
    elif kind == "truncate":
        path.write_bytes(data[:len(data) // 3])
    elif kind == "magic":
        _reseal(path, b"NPCTRACE" + body[8:])
    elif kind == "format":
        _reseal(path, magic + struct.pack("<I", 99) + body[12:])
    elif kind == "garbage":
        _reseal(path, magic + fmt + b"\x80\x04not a pickle")
    elif kind == "empty":
        _reseal(path, magic + fmt)
    elif kind in ("mode", "key", "object", "times"):
        meta = pickle.loads(body[12:])
        if kind == "mode":
            meta["mode"] = "traced"
        elif kind == "key":
            meta["key"] = meta["key"][:-1] + b"\x00"
        elif kind == "times":
            meta["traced"] = "1.0"
        else:
            meta = {**meta, "extra": np.arange(3)}  # an object the loader refuses
        _reseal(path, magic + fmt + pickle.dumps(meta, protocol=4))
    elif kind == "writable":
        path.chmod(0o666)
    elif kind == "symlink":
        other = path.with_suffix(".real")
        path.rename(other)
        path.symlink_to(other)


@pytest.mark.parametrize("kind", ["flip", "truncate", "magic", "format", "garbage", "empty", "mode", "key", "object",
                                  "times", "writable", "symlink"])
def test_damaged_entries_are_ignored(user, kind):
    path = _decide(user)
    _damage(kind, path)
    again = user("pick", 1)
    assert again[0]["traces"] == 1, again


def test_the_entry_as_written_is_what_is_checked(user):
    # (the damage above edits a valid entry: its fields as a later process reads them)
    path = _decide(user)
    body = path.read_bytes()[:-32]
    assert body[:8] == b"NPCMODE1"
    meta = pickle.loads(body[12:])
    assert meta["mode"] in ("eager", "npc") and type(meta["traced"]) is float and type(meta["eager"]) is float
    assert meta["eager"] < meta["traced"]


def test_kept_modes_are_cleared_with_the_kernels(user):
    _decide(user)
    with npc.config.patch(cache_dir=str(user.cache)):
        npc.compiler.clear_cache()
    assert _modes(user.cache) == []
    assert user("pick", 1)[0]["traces"] == 1


def test_nothing_kept_or_read_without_eager_if_faster(user):
    first = user("pick", DECIDING_CALLS, eager_if_faster=False)
    assert _traces(first) == DECIDING_CALLS
    assert _modes(user.cache) == []
    _decide(user)
    again = user("pick", 2, eager_if_faster=False)
    assert _traces(again) == 2 and sum(c["eager_runs"] for c in again) == 0, again


def test_mode_cache_off_keeps_and_reads_nothing(user):
    first = user("pick", DECIDING_CALLS, NPC_MODE_CACHE="0")
    assert first[-1]["eager_runs"] == 1  # decided in the process as before
    assert _modes(user.cache) == []
    _decide(user)
    assert user("pick", 1, NPC_MODE_CACHE="0")[0]["traces"] == 1


def test_npc_entry_names_accept_modes():
    name = "0" * 32 + ".mode"
    with npc.config.patch(cache_dir=""):
        assert npc._core._cache_entry_read(name) is None  # (no disk cache: nothing to read)
    for bad in ("0" * 32 + ".modes", "0" * 31 + ".mode", "g" * 32 + ".mode"):
        with pytest.raises(ValueError):
            npc._core._cache_entry_read(bad)
