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
