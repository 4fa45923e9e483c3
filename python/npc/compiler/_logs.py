"""The compiler's log topics on npc's NPC_LOGS machinery (python/npc/_logging.py).

Topics: recompiles, graph_breaks, guards, fallback, output_code, compile_times, backend
(``NPC_LOGS=recompiles,graph_breaks``; ``all`` for every topic). Each is the logger
``npc.<topic>``.
"""
from .. import _logging

TOPICS = ("recompiles", "graph_breaks", "guards", "fallback", "output_code", "compile_times", "backend")


def enabled(topic):
    """True when `topic` is switched on by NPC_LOGS (or npc.set_logs)."""
    return _logging.enabled(topic)


def log(topic, msg, *args):
    """Logs `msg` under `topic` when it is enabled."""
    if _logging.enabled(topic):
        _logging.get_logger(topic).info(msg, *args)
