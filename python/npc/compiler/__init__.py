"""npc.compile and its tooling (filled in as the tracer lands)."""
