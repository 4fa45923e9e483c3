"""The C++ compiler child process (src/fusion/jit.cpp, Note [compiler child]): time-limited
(npc.config.compile_timeout), run with the GIL released, interrupted by Ctrl-C, gone when
its parent dies, and its failures reported as an exit code or a signal name."""
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import numpy as np
import pytest

import npc
from npc import _core


def unique_source(value=1):
    return f'// {uuid.uuid4().hex}\nextern "C" int npc_cache_test_fn() {{ return {value}; }}\n'


def fake_compiler(tmp_path, body):
    """An executable $CXX running the shell `body` (its arguments are the real compile's)."""
    p = tmp_path / f"cxx-{uuid.uuid4().hex[:8]}"
    p.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    p.chmod(0o755)
    return str(p)


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    with npc.config.patch(cache_dir=str(d), codegen_errors="raise"):
        yield d


def gone(pid):
    """Whether process `pid` has ended (a zombie not yet reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def wait_for(pred, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def test_slow_compiler_times_out_and_the_function_runs_eagerly(cache, tmp_path, capfd):
    cxx = fake_compiler(tmp_path, "sleep 30\n")
    x = np.linspace(-2.0, 2.0, 33)
    s0 = npc._fusion.stats()
    c0 = npc.compiler.stats()["compile_timeouts"]
    with npc.config.patch(cxx=cxx, compile_timeout=1.0):
        t0 = time.monotonic()
        f = npc.compile(lambda a: np.tanh(a) * 3.0 - a, backend="fused")
        r = f(x)
        g = npc.compile(lambda a: np.exp(a) + 1.5, backend="fused")
        r2 = g(x)
        elapsed = time.monotonic() - t0
    np.testing.assert_array_equal(r, np.tanh(x) * 3.0 - x)
    np.testing.assert_array_equal(r2, np.exp(x) + 1.5)
    assert elapsed < 10
    s1 = npc._fusion.stats()
    assert s1["compile_timeouts"] == s0["compile_timeouts"] + 2
    assert npc.compiler.stats()["compile_timeouts"] == c0 + 2
    assert s1["fallbacks"] > s0["fallbacks"]
    err = capfd.readouterr().err
    assert err.count("npc.config.compile_timeout") == 1  # warned once
    assert not [p for p in cache.iterdir() if p.name.startswith("tmp-")]


def test_failure_reports_exit_code_or_signal_name(cache, tmp_path):
    with npc.config.patch(cxx=fake_compiler(tmp_path, "echo broken >&2\nexit 3\n")):
        with pytest.raises(npc.CodegenError, match=r"\(exit code 3, ") as e:
            _core._fusion_jit(unique_source())
    assert "exit 768" not in str(e.value) and "broken" in str(e.value)
    with npc.config.patch(cxx=fake_compiler(tmp_path, "kill -SEGV $$\n")):
        with pytest.raises(npc.CodegenError, match=r"\(killed by SIGSEGV, "):
            _core._fusion_jit(unique_source())


def test_other_threads_run_while_the_compiler_runs(cache, tmp_path):
    # The compile starts from npc.compile (which holds the GIL when it calls the backend).
    cxx = fake_compiler(tmp_path, 'sleep 1\nexec c++ "$@"\n')
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    x = np.arange(8.0)
    t = threading.Thread(target=ticker, daemon=True)
    with npc.config.patch(cxx=cxx, compile_timeout=30.0):
        t.start()
        t0 = time.monotonic()
        r = npc.compile(lambda a: a * 7.0 + np.sqrt(a), backend="fused")(x)
        t1 = time.monotonic()
        stop.set()
        t.join()
    np.testing.assert_array_equal(r, x * 7.0 + np.sqrt(x))
    during = [s for s in ticks if t0 + 0.1 < s < t1 - 0.1]
    assert t1 - t0 > 1.0
    assert len(during) > 40, f"{len(during)} ticks in {t1 - t0:.2f} s"


CHILD = textwrap.dedent("""
    import sys, numpy as np, npc
    npc.config.cxx = sys.argv[1]
    npc.config.cache_dir = sys.argv[2]
    npc.config.compile_timeout = 60.0
    try:
        npc.compile(lambda a: a * 3.0 + 1.0, backend="fused")(np.arange(4.0))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(7)
    print("finished", flush=True)
""")


def start_child(tmp_path, cache):
    pids = tmp_path / "pids"
    # The fake compiler records its own pid and that of a child of its own (as a compiler
    # driver runs cc1plus), then waits.
    cxx = fake_compiler(tmp_path, f"""\
        sleep 30 &
        echo "$$ $!" > {pids}.tmp && mv {pids}.tmp {pids}
        wait
    """)
    p = subprocess.Popen([sys.executable, "-c", CHILD, cxx, str(cache)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert wait_for(pids.exists, 60), p.communicate(timeout=5)
    return p, [int(v) for v in pids.read_text().split()]


def test_ctrl_c_interrupts_the_compile_promptly(cache, tmp_path):
    p, pids = start_child(tmp_path, cache)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert time.monotonic() - t0 < 3, err
    assert p.returncode == 7 and "interrupted" in out, err
    assert wait_for(lambda: all(gone(q) for q in pids), 3)


def test_compiler_dies_with_its_parent(cache, tmp_path):
    p, pids = start_child(tmp_path, cache)
    assert not any(gone(q) for q in pids)
    p.kill()
    p.communicate(timeout=10)  # also closes its pipes
    assert wait_for(lambda: all(gone(q) for q in pids), 3), pids
