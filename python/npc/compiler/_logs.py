"""NPC_LOGS: which compiler events are logged, through Python's logging.

``NPC_LOGS=recompiles,graph_breaks,guards,fallback,output_code,compile_times`` (a comma
list; ``+name`` logs that topic at DEBUG detail, ``all`` enables every topic). Each topic
is the logger ``npc.<topic>``.
"""
import logging
import os
import sys

TOPICS = ("recompiles", "graph_breaks", "guards", "fallback", "output_code", "compile_times", "backend")

_enabled = {}


def _parse(spec):
    out = {}
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        detail = item.startswith("+")
        name = item.lstrip("+")
        names = TOPICS if name == "all" else (name,)
        for n in names:
            out[n] = logging.DEBUG if detail else logging.INFO
    return out


def configure(spec=None):
    """(Re)reads NPC_LOGS (or `spec`) and sets the levels of the ``npc.<topic>`` loggers."""
    global _enabled
    _enabled = _parse(os.environ.get("NPC_LOGS", "") if spec is None else spec)
    for topic in TOPICS:
        log = logging.getLogger("npc." + topic)
        if topic in _enabled:
            log.setLevel(_enabled[topic])
            if not any(getattr(h, "_npc", False) for h in log.handlers):
                h = logging.StreamHandler(sys.stderr)
                h.setFormatter(logging.Formatter("[npc.%(name)s] %(message)s".replace("%(name)s", topic)))
                h._npc = True
                log.addHandler(h)
        else:
            log.setLevel(logging.WARNING)


def enabled(topic):
    """True when `topic` is switched on by NPC_LOGS."""
    return topic in _enabled


def log(topic, msg, *args, detail=False):
    """Logs `msg` under topic (at DEBUG when `detail`)."""
    if topic in _enabled:
        logging.getLogger("npc." + topic).log(logging.DEBUG if detail else logging.INFO, msg, *args)


configure()
