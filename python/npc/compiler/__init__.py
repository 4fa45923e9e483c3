"""npc.compile and its tooling: capture (tracing into npc's graph IR), guards and caches,
graph breaks, recompiles, dynamic shapes, explain/stats/compile_times, NPC_LOGS and
NPC_COMPILE_DEBUG. See docs/compile.md and docs/ir.md."""
from ._api import CompiledFunction, GraphBreakError, compile, config, disable, jit, run
from ._breaks import disallow_in_graph, graph_break
from ._explain import ExplainOutput, explain
from ._state import compile_times, mark_dynamic, register_backend, reset, stats
from . import _logs as logs
from .._fusion import clear_cache

__all__ = ["compile", "jit", "explain", "reset", "stats", "compile_times", "run", "disable",
           "disallow_in_graph", "graph_break", "mark_dynamic", "register_backend", "GraphBreakError",
           "config", "CompiledFunction", "ExplainOutput", "logs", "clear_cache"]
