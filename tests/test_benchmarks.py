"""The benchmark scripts keep up with the code they measure: each imports, and the profiler's
stage hooks all find the functions they wrap (a redesign once left profile_audit.py patching a
name that had moved, and it failed only when someone ran it)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODE = """
import importlib, sys
from pathlib import Path
sys.path[:0] = [str(Path('benchmarks').resolve()), str(Path('tests').resolve())]
for script in sorted(Path('benchmarks').glob('*.py')):
    importlib.import_module(script.stem)
import profile_audit
profile_audit.instrument()
print('ok', len(list(Path('benchmarks').glob('*.py'))))
"""


def test_every_benchmark_imports_and_the_profiler_finds_every_stage():
    done = subprocess.run([sys.executable, "-c", CODE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", str(len(list((ROOT / "benchmarks").glob("*.py"))))]


def test_the_floor_counts_exactly_what_the_library_loop_counts():
    """bench_audit's floor (the leanest gigatoken count) is a floor only if it counts the same
    tokens: both scripts on the bundled samples, cl100k; and the floor that first loads the
    library (the bound for audits that keep it as arbiter) still counts with gigatoken alone."""
    import pytest

    pytest.importorskip("gigatoken", reason="gigatoken not installed: no floor to time")
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests")]
    try:
        import bench_audit
    finally:
        del sys.path[:2]
    from fertility.backends import load_tokenizer

    ranks = str(load_tokenizer("tiktoken:cl100k_base", exact_library=True).source)
    files = [str(p) for p in sorted((ROOT / "corpora_samples").glob("*.txt"))]
    assert files

    def count(*args: str) -> int:
        done = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, timeout=120, check=True)
        return int(done.stdout)
    library = count(bench_audit.RAW["tiktoken"], *files)
    assert count(bench_audit.RAW["floor"], ranks, *files) == library > 1000
    assert count(bench_audit.LIBRARY_LOAD["tiktoken"] + bench_audit.RAW["floor"], ranks, *files) == library
