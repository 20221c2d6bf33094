"""The house: every package ships, and imports follow the pipeline's layers (pyproject's
[tool.importlinter]); a module that imports upward or reaches into a private backend fails here."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "fertility").rglob("__init__.py")}
    assert folders - listed == set(), "packages missing from [tool.setuptools] packages"


def test_imports_follow_the_layers():
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert command is not None, "lint-imports not found: install the test extra (pip install -e '.[test]')"
    done = subprocess.run([command], check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_every_private_backend_module_is_guarded():
    """import-linter takes no `_*` wildcard: a new private backend module must be listed."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    guarded = {m for c in contracts if c["type"] == "forbidden" for m in c["forbidden_modules"]}
    private = {f"fertility.backends.{p.stem}" for p in (ROOT / "fertility" / "backends").glob("_*.py")
               if p.stem != "__init__"}
    assert private - guarded == set()
