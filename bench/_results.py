"""Shared by the bench scripts: their sections of bench/RESULTS.md and a median timer."""
import pathlib
import statistics
import time

RESULTS = pathlib.Path(__file__).with_name("RESULTS.md")


def write_section(name, lines):
    """Replaces section `name` of bench/RESULTS.md (the text from ``<!-- name -->`` to
    ``<!-- /name -->``) with `lines`, or appends the section when the file has none."""
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    section = "\n".join([begin, *lines, end])
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)


def median_time(fn, number, repeat, clock=time.perf_counter):
    """Median over `repeat` runs of the time of one call of fn (each run: `number` calls), s.
    `clock` is wall time by default; time.process_time gives CPU time of all threads."""
    ts = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            fn()
        ts.append((clock() - t0) / number)
    return statistics.median(ts)
