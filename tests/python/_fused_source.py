"""The generated kernel text of a compiled function, for tests that check what fused code calls."""
import npc
from npc import _core


def compiled_source_and_result(fn, args, capfd):
    """fn(*args) compiled with the fused backend (no break, no eager fallback), and the
    generated kernel text (printed by output_code) from its first kernel (`extern "C" int`) on."""
    capfd.readouterr()
    old = _core._fusion_get_config()["output_code"]
    _core._fusion_set_config({"output_code": True})
    try:
        f = npc.compile(fn, backend="fused")
        s0 = npc._fusion.stats()
        out = f(*args)
        s1 = npc._fusion.stats()
    finally:
        _core._fusion_set_config({"output_code": old})
    assert not f.last_breaks, f.last_breaks
    assert s1["fallbacks"] == s0["fallbacks"], "ran on the eager backend"
    err = capfd.readouterr().err
    return out, err[err.find('extern "C" int '):]
