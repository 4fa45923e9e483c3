"""npc's logs, switched on by topic with the ``NPC_LOGS`` environment variable.

``NPC_LOGS=fallback,recompiles`` turns on the ``fallback`` and ``recompiles`` topics
(``NPC_LOGS=all`` every topic; a leading ``-`` turns one off again, ``+`` is accepted and
ignored). Each topic is a standard :mod:`logging` logger named ``npc.<topic>``, so the
usual logging configuration applies too. Layers use::

    from npc._logging import get_logger, enabled, log_once
    log = get_logger("fallback")
    if enabled("fallback"): ...
    log_once("fallback", key, "message %s", arg)   # one message per key

:func:`set_logs` changes the topics at run time (``npc.set_logs("fallback")``).
"""
import logging
import os
import sys

__all__ = ["get_logger", "enabled", "log_once", "set_logs"]

_enabled = set()
_all = False
_once = set()
_handler = None


def _parse(spec):
    on, every = set(), False
    for part in (spec or "").replace(" ", ",").split(","):
        part = part.strip().lstrip("+")
        if not part:
            continue
        if part.startswith("-"):
            on.discard(part[1:])
        elif part == "all":
            every = True
        else:
            on.add(part)
    return on, every


def set_logs(spec=""):
    """Sets the enabled topics from a string like ``NPC_LOGS`` ("fallback,graph_breaks")."""
    global _all
    on, every = _parse(spec)
    _enabled.clear()
    _enabled.update(on)
    _all = every
    for topic in on:
        _configure(get_logger(topic))
    _once.clear()


def enabled(topic):
    """True when `topic` is on (from NPC_LOGS or set_logs)."""
    return _all or topic in _enabled


def get_logger(topic):
    """The ``logging.Logger`` of `topic` (``npc.<topic>``), writing to stderr when enabled."""
    log = logging.getLogger("npc." + topic)
    if enabled(topic):
        _configure(log)
    return log


def _configure(log):
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    if _handler not in log.handlers:
        log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def log_once(topic, key, msg, *args):
    """Logs `msg` under `topic` the first time `key` is seen (when the topic is enabled)."""
    if not enabled(topic) or (topic, key) in _once:
        return
    _once.add((topic, key))
    get_logger(topic).info(msg, *args)


set_logs(os.environ.get("NPC_LOGS", ""))
