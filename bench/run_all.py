"""`make bench`: runs every bench/bench_*.py (each measures npc against NumPy, and peers
where installed, side by side in one process, and updates its own section of
bench/RESULTS.md)."""
import pathlib
import subprocess
import sys


def main():
    here = pathlib.Path(__file__).parent
    failed = []
    for script in sorted(here.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script)], cwd=here.parent) != 0:
            failed.append(script.name)
    if failed:
        print("benchmarks that failed:", ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
