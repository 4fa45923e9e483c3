"""Settings and counters of the fused backend (src/fusion).

Settings live in ``npc.config`` and are read at each compile:

cxx : str, default ``$CXX`` or ``"c++"``
    The C++ compiler command for generated kernels.
cxxflags : str, default ``"-O3 -march=native -fopenmp -ffp-contract=off"``
    Its flags (``-std=c++17 -shared -fPIC`` are added). No FMA contraction keeps results
    equal to NumPy's.
cache_dir : str, default ``$NPC_CACHE_DIR`` or ``~/.cache/npc``
    On-disk cache of compiled kernels (keyed by source, compiler, flags, CPU, npc version).
codegen_errors : {"warn", "raise"}, default "warn"
    What a failed code generation or C++ compile does: "warn" logs a warning and runs the
    graph on the eager backend; "raise" raises ``npc.CodegenError`` (the tests run so).

``stats()`` returns the backend's counters (graphs, kernels, compiles, disk_hits,
memory_hits, corrupt_entries, kernel_runs, library_calls, fallbacks, compile_seconds).
"""
import os

from . import _core
from ._config import config

CodegenError = _core.CodegenError

config.register("cxx", os.environ.get("CXX") or "c++", "C++ compiler command of the fused backend ($CXX)")
config.register("cxxflags", "-O3 -march=native -fopenmp -ffp-contract=off",
                "flags of generated-kernel compiles (-std=c++17 -shared -fPIC are added)")
config.register("cache_dir", os.environ.get("NPC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "npc"),
                "on-disk cache of compiled kernels ($NPC_CACHE_DIR)")
config.register("codegen_errors", "warn",
                "'warn': a failed codegen/compile logs and runs eagerly; 'raise': it raises npc.CodegenError")


def stats():
    """Counters of the fused backend since the last ``reset_stats()`` (dict)."""
    return _core._fusion_stats()


def reset_stats():
    """Resets the fused backend's counters."""
    _core._fusion_reset_stats()
