"""Shared test configuration: derandomised hypothesis under CI, a fresh NPC_CACHE_DIR."""
import os
import tempfile

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") or os.environ.get("HYPOTHESIS_PROFILE") == "ci" else "dev")

if "NPC_CACHE_DIR" not in os.environ:
    os.environ["NPC_CACHE_DIR"] = tempfile.mkdtemp(prefix="npc-test-cache-")
os.environ.setdefault("NPC_VERIFY", "1")
# Timing-based choices of compiled functions off (tests/python/test_compile_slow_breaks.py
# switches it on): trace and break counts must not depend on the machine's speed.
os.environ.setdefault("NPC_EAGER_IF_FASTER", "0")
# Kept traces off (tests/python/test_compile_trace_cache.py switches them on): the test
# processes share one cache directory, and a test's function traced in one worker would be
# loaded in another, so counts of traces would depend on the order tests ran in.
os.environ.setdefault("NPC_TRACE_CACHE", "0")


import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _fresh_compiler_per_module():
    """Each test module starts with empty compile caches and counters, so whether
    config.accumulated_recompile_limit (traces per process) is hit never depends on which
    modules ran before in the same worker."""
    import npc
    npc.compiler.reset()
    yield
