"""The include edges between npc's C++ layers (docs/architecture.md, "Layers"): a layer's
sources include only the public headers, their own layer's headers and those of the layers
below it, so that no layer reaches up (src/core never includes src/ops, src/ops never
src/tracer or src/fusion)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# layer -> the src/ directories its sources may include from (besides include/npc)
ALLOWED = {
    "core": {"core"},
    "ops": {"core", "ops"},
    "tracer": {"core", "ops", "tracer"},
    "fusion": {"core", "ops", "tracer", "fusion"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def _sources(layer):
    return sorted(p for p in (ROOT / "src" / layer).rglob("*") if p.suffix in {".cpp", ".hpp", ".h", ".def", ".inc"})


def _includes(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for name in INCLUDE.findall(text):
        head = name.split("/", 1)[0] if "/" in name else None
        yield name, head


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_includes_only_lower_layers(layer):
    assert _sources(layer), f"no sources under src/{layer}"
    bad = []
    for path in _sources(layer):
        for name, head in _includes(path):
            if head is None or head == "npc":
                continue  # same directory, or a public header
            if head in ALLOWED and head not in ALLOWED[layer]:
                bad.append(f"{path.relative_to(ROOT)}: #include \"{name}\"")
    assert not bad, "includes from a higher layer:\n" + "\n".join(bad)


def test_public_headers_include_only_public_headers():
    bad = [f"{p.relative_to(ROOT)}: #include \"{name}\""
           for p in sorted((ROOT / "include" / "npc").rglob("*.hpp"))
           for name, head in _includes(p) if head is not None and head != "npc"]
    assert not bad, "\n".join(bad)
