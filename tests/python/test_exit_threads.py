"""Exit-time safety: daemon threads still running npc kernels (GIL released) while the
interpreter finalizes must not abort the process (Note [GIL at exit] in
python/npc/csrc/gil.cpp). Each run is a fresh interpreter; before the fix about two runs
in three aborted with "terminate called without an active exception"."""
import subprocess
import sys

import pytest

# Kernels just above the size at which npc releases the GIL, so that the threads keep
# giving the GIL back and asking for it again: some are waiting for it when the main
# thread starts finalizing, some finish their kernel after finalization began.
REPRO = """
import threading, time
import npc
a = npc.ones(5000)
rng = npc.random.default_rng(0)
def work():
    while True:
        a * 2.0
        npc.sin(a)
        a.sum()
        rng.random(5000)
for _ in range(8):
    threading.Thread(target=work, daemon=True).start()
time.sleep(0.2)
print("done")
"""


@pytest.mark.parametrize("run", range(6))
def test_daemon_threads_in_kernels_at_exit(run):
    r = subprocess.run([sys.executable, "-c", REPRO], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "done"
    assert "terminate called" not in r.stderr
