"""Several processes compiling the same function into one fresh kernel cache at the same time
(Dask workers on one machine share ``NPC_CACHE_DIR``: docs/dask.md, Note [disk cache] in
src/fusion/jit.cpp): every process gets NumPy's result, no entry is corrupt or partial, no
temporary is left, and a later process loads every kernel from the disk without compiling."""
import json
import os
import subprocess
import sys
import time

import numpy as np

WORKER = r"""
import json, os, sys, time
import numpy as np
import npc
go = sys.argv[1]
@npc.compile
def chain(b, m):
    return ((b - m) ** 2 * 0.5 + np.abs(b)).sum(axis=0)
x = np.arange(6000.0).reshape(300, 20) % 17 - 8
m = x.mean(axis=0)
while not os.path.exists(go):  # every process starts compiling at the same moment
    time.sleep(0.005)
r = chain(x, m)
r2 = chain(x[:100], m)  # a second chunk shape: a second kernel
s = npc._fusion.stats()
print(json.dumps({"r": r.tolist(), "r2": r2.tolist(), "compiles": s["compiles"], "disk_hits": s["disk_hits"],
                  "kernels": s["kernels"], "graphs": s["graphs"], "corrupt": s["corrupt_entries"]}))
"""


def _expected(n):
    x = np.arange(6000.0).reshape(300, 20) % 17 - 8
    m = x.mean(axis=0)
    return ((x[:n] - m) ** 2 * 0.5 + np.abs(x[:n])).sum(axis=0)


def _start(cache, go):
    env = dict(os.environ, NPC_CACHE_DIR=str(cache))
    return subprocess.Popen([sys.executable, "-c", WORKER, str(go)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _result(p):
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_concurrent_writers_of_the_same_entries(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    go = tmp_path / "go"
    procs = [_start(cache, go) for _ in range(4)]
    time.sleep(1.0)  # let them import npc and wait
    go.touch()
    results = [_result(p) for p in procs]
    for r in results:
        np.testing.assert_array_equal(np.array(r["r"]), _expected(300))
        np.testing.assert_array_equal(np.array(r["r2"]), _expected(100))
        assert r["corrupt"] == 0 and r["kernels"] >= 2
    names = sorted(os.listdir(cache))
    assert names and not [n for n in names if n.startswith(("tmp-", "failed-"))], names
    # A later process finds every kernel in the cache the racing writers filled.
    go2 = tmp_path / "go2"
    go2.touch()
    later = _result(_start(cache, go2))
    # one translation unit per graph: every graph's comes from the disk
    assert later["compiles"] == 0 and later["disk_hits"] == later["graphs"] >= 2 and later["corrupt"] == 0, later
    np.testing.assert_array_equal(np.array(later["r"]), _expected(300))
