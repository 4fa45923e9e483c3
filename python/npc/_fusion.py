"""Settings and counters of the fused backend (src/fusion).

Settings live in ``npc.config`` and are read at each compile:

cxx : str, default ``$CXX`` or ``"c++"``
    The C++ compiler command for generated kernels.
cxxflags : str, default ``"-O3 -march=native -mprefer-vector-width=256 -fopenmp -ffp-contract=off -fno-math-errno"``
    Its flags (``-std=c++17 -shared -fPIC`` are added). No FMA contraction keeps results
    equal to NumPy's; one vector width on every CPU keeps the order of a float sum's lanes
    (Note [kernel vector width] in src/fusion/jit.cpp).
cache_dir : str, default ``$NPC_CACHE_DIR`` or ``~/.cache/npc``
    On-disk cache of compiled kernels (keyed by source, compiler, flags, CPU, npc version).
    Used only when it is a directory owned by you (or root) that group and others cannot
    write (npc creates it with mode 0700); otherwise npc warns and keeps no disk cache
    (docs/fusion.md, "The cache as a trust boundary"). A read-only one is used for lookups.
cache_size_limit : int, default 1 GiB
    Bytes of compiled kernels kept in ``cache_dir``; the least recently used entries are
    removed past it (``None`` or 0: no limit).
lowering_cache : bool, default True (``$NPC_LOWERING_CACHE=0``: False)
    Also keep each graph's lowered program in ``cache_dir``, so a graph lowered by an earlier
    process is not lowered again (Note [lowered-program cache] in src/fusion/lower_cache.cpp).
compile_timeout : float, default 60 (``$NPC_COMPILE_TIMEOUT``)
    Seconds a C++ compiler run may take; past it the compiler is stopped, a warning is
    printed once and the graph runs eagerly (``compile_timeouts`` counts it). ``None`` or
    0: no limit.
codegen_errors : {"warn", "raise"}, default "warn"
    What a failed code generation or C++ compile does: "warn" logs a warning and runs the
    graph on the eager backend; "raise" raises ``npc.CodegenError`` (the tests run so).

``stats()`` returns the backend's counters (graphs, kernels, compiles, disk_hits,
memory_hits, lowering_cache_hits, lowering_cache_stores, corrupt_entries, compile_timeouts, evictions, kernel_runs, library_calls,
merged_products (matrix-vector products run as part of one matrix product or one row pass), fallbacks, compile_seconds). ``clear_cache()`` empties the kernel cache.
"""
import os

from . import _core
from ._config import config

CodegenError = _core.CodegenError

config.register("cxx", os.environ.get("CXX") or "c++", "C++ compiler command of the fused backend ($CXX)")
config.register("cxxflags", "-O3 -march=native -mprefer-vector-width=256 -fopenmp -ffp-contract=off -fno-math-errno",
                "flags of generated-kernel compiles (-std=c++17 -shared -fPIC are added)")
config.register("cache_dir", os.environ.get("NPC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "npc"),
                "on-disk cache of compiled kernels ($NPC_CACHE_DIR)")
config.register("cache_size_limit", 1 << 30,
                "bytes of compiled kernels kept in cache_dir (least recently used go first; None or 0: no limit)")
config.register("lowering_cache", os.environ.get("NPC_LOWERING_CACHE") != "0",
                "keep lowered programs in cache_dir too, so graphs lowered by an earlier process are not "
                "lowered again ($NPC_LOWERING_CACHE=0: off)")
config.register("compile_timeout", float(os.environ.get("NPC_COMPILE_TIMEOUT") or 60.0),
                "seconds a C++ compiler run may take before it is stopped and the graph runs eagerly "
                "($NPC_COMPILE_TIMEOUT; None or 0: no limit)")
config.register("codegen_errors", "warn",
                "'warn': a failed codegen/compile logs and runs eagerly; 'raise': it raises npc.CodegenError")


def stats():
    """Counters of the fused backend since the last ``reset_stats()`` (dict)."""
    return _core._fusion_stats()


def reset_stats():
    """Resets the fused backend's counters."""
    _core._fusion_reset_stats()


def clear_cache():
    """Removes the compiled kernels (and the lowered programs, kept traces and kept eager
    decisions stored with them) from the disk cache and forgets the loaded ones.

    Files are removed from ``npc.config.cache_dir`` when this process may write it, and from
    the process's private kernel directory. Kernels already loaded keep working; later
    compiles look the cache up again.

    Returns
    -------
    int
        The number of files removed.
    """
    return _core._fusion_clear_cache()
