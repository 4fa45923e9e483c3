"""A cache entry loaded again from the disk after npc.fusion's clear_cache() forgot the loaded
kernels must not make the dynamic loader hand the old kernels to later, different ones
(Note [loading through /proc/self/fd] in src/fusion/jit.cpp): every kernel compiled after
that returned sin(x) + 1, and kernels of another signature crashed the process."""
import os
import subprocess
import sys

import numpy as np

import npc

CHILD = r"""
import tempfile, numpy as np, npc
x = np.linspace(0, 1, 7)
npc.compile(lambda a: np.sin(a) + 1)(x)
with npc.config.patch(cache_dir=tempfile.mkdtemp()):
    npc._fusion.clear_cache()          # forgets the loaded kernels; their files stay
npc.compile(lambda a: np.sin(a) + 1)(x)  # the same entry, found on the disk again
fns = [lambda a: np.cos(a) * 3, lambda a: np.exp(a) - 2, lambda a: np.tan(a) / 5,
       lambda a: (a * a, a.sum()), lambda a: np.sqrt(a)[::-1] + a]
for f in fns:
    got, want = npc.compile(f, backend="fused")(x), f(x)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)
print("ok")
"""


def test_kernels_after_reloading_an_entry_are_their_own(tmp_path):
    # A fresh process: which descriptor numbers the loads use depends on the process's history.
    env = dict(os.environ, NPC_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_reloading_in_this_process(tmp_path):
    # The same sequence in the test process itself (whatever it loaded before).
    x = np.linspace(0, 1, 9)
    with npc.config.patch(cache_dir=str(tmp_path / "a")):
        npc.compile(lambda a: np.arctan(a) - 1)(x)
        with npc.config.patch(cache_dir=str(tmp_path / "b")):
            npc._fusion.clear_cache()
        npc.compile(lambda a: np.arctan(a) - 1)(x)
        for f in (lambda a: np.cosh(a) * 7, lambda a: np.log1p(a) + 4, lambda a: a ** 3 - a):
            np.testing.assert_allclose(np.asarray(npc.compile(f)(x)), f(x), rtol=1e-12)
